#!/usr/bin/env python3
"""fio 3.33's random map with several block sizes, as an algorithm (io_u.c: a block drawn
uniformly, axmap_next_free when it is used, a size drawn again until it fits before the
file's end, mark_random_map shortening it to the free blocks from the first): the mean number
of requests of one pass of bssplit=4k/60:64k/40 over 8 MiB, over 200 seeds.
Used in docs/validation/2026-12-fio-loops.md.  Run: python3 bench/fio-randommap-sim.py
"""
import random
def run(seed,n=2048):
    r=random.Random(seed); used=[False]*n; cnt=0; full=0; sizes=[]
    while full<n:
        b=r.randrange(n)
        if used[b]:
            k=(b+1)%n
            while used[k]: k=(k+1)%n
            b=k
        while True:
            l=1 if r.random()<0.6 else 16
            if b+l<=n: break
        k=0
        while k<l and b+k<n and not used[b+k]:
            used[b+k]=True; k+=1
        full+=k; cnt+=1; sizes.append(k)
    return cnt, sizes.count(16), sum(1 for s in sizes if s not in (1,16))
res=[run(s) for s in range(200)]
import statistics as st
print('mean reqs',st.mean(r[0] for r in res),'sd',st.stdev(r[0] for r in res),'64k',st.mean(r[1] for r in res),'short',st.mean(r[2] for r in res))

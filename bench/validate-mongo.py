#!/usr/bin/env python3
"""Summarises bench/validate-mongo.sh: the generator check, then per filesystem and set the
median seconds of each phase done by the shell tools and by fsarena (ratio fsarena/shell),
and the space and fragmentation figures of both. Markdown on stdout."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
fslist = sys.argv[2].split()
sets = sys.argv[3].split()
reps = int(sys.argv[4])
PHASES = ["create", "copy", "symlinks", "read", "stats", "rename", "delete"]

# 1. Generator.
print("## Generator: C model (glibc rand) vs fsarena create_N on tmpfs\n")
print("| set | C files | C bytes | C dirs | fsarena files | fsarena bytes | fsarena dirs | equal |")
print("|---|---|---|---|---|---|---|---|")
gen = json.loads((out / "generator.json").read_text())
phases = {p["name"]: p for p in gen["trials"][0]["phases"]}
for line in (out / "c-model.txt").read_text().splitlines():
    f = line.split()
    s, files, nbytes, dirs = f[0], int(f[2]), int(f[4]), int(f[6]) + 1  # + the root
    p = phases[f"create_{s}"]
    ff, fb, fd = int(p["extra"]["files"]), p["bytes_written"], int(p["extra"]["dirs"])
    same = (files, nbytes, dirs) == (ff, fb, fd)
    print(f"| {s} | {files} | {nbytes} | {dirs} | {ff} | {fb} | {fd} | {'yes' if same else 'NO'} |")


def shell_run(fs, s, rep):
    d = {}
    for line in (out / f"shell-{fs}-{s}-{rep}.txt").read_text().splitlines():
        k, v = line.split()
        d[k] = float(v)
    return d


def fsarena_run(fs, s, rep):
    v = json.loads((out / f"fsarena-{fs}-{s}-{rep}.json").read_text())
    t = v["trials"][0]
    assert t["status"] == "ok", t
    d = {}
    for p in t["phases"]:
        name = p["name"].rsplit("_", 1)[0]
        d[name] = p["wall_s"]
        for k, x in p.get("extra", {}).items():
            d[f"{name}_{k}"] = x
    return d


def med(runs, key):
    xs = [r[key] for r in runs if key in r]
    return statistics.median(xs) if xs else None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


print(f"\n## Phase times: shell / fsarena, median of {reps} in seconds, ratio fsarena ÷ shell, [min–max]\n")
for fs in fslist:
    print(f"\n### {fs}\n")
    print("| set | " + " | ".join(PHASES) + " |")
    print("|---|" + "---|" * len(PHASES))
    figures = []
    for s in sets:
        sh = [shell_run(fs, s, r) for r in range(1, reps + 1)]
        fa = [fsarena_run(fs, s, r) for r in range(1, reps + 1)]
        cells = []
        for ph in PHASES:
            a, b = med(sh, ph), med(fa, ph)
            ra = f"{fmt(min(r[ph] for r in sh))}–{fmt(max(r[ph] for r in sh))}"
            rb = f"{fmt(min(r[ph] for r in fa))}–{fmt(max(r[ph] for r in fa))}"
            cells.append(f"{fmt(a)} / {fmt(b)} = {fmt(b / a if a else None)}× "
                         f"<br>[{ra}] / [{rb}]")
        print(f"| {s} shell / fsarena | " + " | ".join(cells) + " |")
        for ph in ["create", "copy"]:
            row = [f"{s}", ph]
            for key in ["space_used_kib", "dirs", "files", "files_over_16k"]:
                row.append(f"{fmt(med(sh, f'{ph}_{key}'), 0)} / {fmt(med(fa, f'{ph}_{key}'), 0)}")
            frag_sh = med(sh, f"{ph}_fragments")
            n16 = med(sh, f"{ph}_files_over_16k")
            frag_sh = frag_sh / n16 if frag_sh is not None and n16 else None
            row.append(f"{fmt(frag_sh, 3)} / {fmt(med(fa, f'{ph}_fragmentation'), 3)}")
            figures.append(row)
    print("\n| set | after | space KiB (df / fsarena) | dirs | files | files > 16 KiB | "
          "fragmentation (filefrag / fsarena) |")
    print("|---|---|---|---|---|---|---|")
    for row in figures:
        print("| " + " | ".join(row) + " |")

cp = sorted(out.glob("cp-never-*.txt"))
if cp:
    print(f"\n## Copy by data: `cp -r --reflink=never` vs fsarena copy_N, median of {reps} (s)\n")
    print("| fs | set | cp -r (default) | cp -r --reflink=never | fsarena | fsarena / never |")
    print("|---|---|---|---|---|---|")
    for fs in fslist:
        for s in sets:
            files = [out / f"cp-never-{fs}-{s}-{r}.txt" for r in range(1, reps + 1)]
            if not all(f.exists() for f in files):
                continue
            never = statistics.median(float(f.read_text().split()[1]) for f in files)
            sh = med([shell_run(fs, s, r) for r in range(1, reps + 1)], "copy")
            fa = med([fsarena_run(fs, s, r) for r in range(1, reps + 1)], "copy")
            print(f"| {fs} | {s} | {fmt(sh)} | {fmt(never)} | {fmt(fa)} | {fmt(fa / never)}× |")

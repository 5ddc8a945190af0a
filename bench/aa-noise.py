#!/usr/bin/env python3
"""A/A noise of the runs bench/aa-noise.sh made: python3 bench/aa-noise.py OUT [TAG ...].

For each tag (`before`, `after`; default both), over its runs (two targets `a` and `b`,
the same filesystem) and each phase's headline rate (ops_per_s):

* CVa, CVb: coefficient of variation over the repetitions of each target (median over runs);
* CVr: the same of the per-repetition ratio a/b (a and b of one repetition run back to
  back, the targets' order rotating);
* unpaired ±: half-width of the 95% interval of the ratio of geometric means by Welch's t
  on logarithms (what `compare` uses), as e^(t·se) − 1;
* paired ±: the same from the per-repetition log ratios (t with n − 1 degrees of freedom);
* r(a,b): correlation of log a and log b within repetitions (what pairing can gain);
* busy: share of trials flagged `b`; others' MB/s: the disturbance record's bytes others
  moved on the disk under the image, per second of trial (median);
* quiet/busy sd: root mean square of ln(value / the target's median in its run) over the
  trials not flagged `b` and over those flagged;
* load R²: how much of that deviation (slower = positive) others' CPU share and
  ln(1 + others' MB) explain together (least squares, all phases pooled);
* disk read/write MB/s and drop_caches per minute over the runs, from disk.log.

Python 3.8+, standard library only (t quantiles from a table, df rounded down).
"""
import json, math, sqlite3, statistics as st, sys

T975 = [0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]


def t975(df):
    df = max(1, int(df))
    return T975[df] if df < len(T975) else 1.96 + 2.4 / df


def cv(xs):
    return st.stdev(xs) / st.mean(xs)


def corr(x, y):
    mx, my = st.mean(x), st.mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def r_squared(y, x1, x2):
    """R² of the least-squares fit y ~ x1 + x2."""
    my, m1, m2 = st.mean(y), st.mean(x1), st.mean(x2)
    s11 = sum((a - m1) ** 2 for a in x1)
    s22 = sum((a - m2) ** 2 for a in x2)
    s12 = sum((a - m1) * (b - m2) for a, b in zip(x1, x2))
    s1y = sum((a - m1) * (b - my) for a, b in zip(x1, y))
    s2y = sum((a - m2) * (b - my) for a, b in zip(x2, y))
    syy = sum((b - my) ** 2 for b in y)
    det = s11 * s22 - s12 * s12
    if det == 0 or syy == 0:
        return float("nan")
    b1, b2 = (s22 * s1y - s12 * s2y) / det, (s11 * s2y - s12 * s1y) / det
    return (b1 * s1y + b2 * s2y) / syy


def phase_stats(xa, xb):
    n = len(xa)
    la, lb = [math.log(x) for x in xa], [math.log(x) for x in xb]
    d = [p - q for p, q in zip(la, lb)]
    paired = math.exp(t975(n - 1) * st.stdev(d) / math.sqrt(n)) - 1
    va, vb = st.variance(la) / n, st.variance(lb) / n
    df = (va + vb) ** 2 / (va ** 2 / (n - 1) + vb ** 2 / (n - 1)) if va + vb > 0 else n - 1
    unpaired = math.exp(t975(df) * math.sqrt(va + vb)) - 1
    return cv(xa), cv(xb), cv([math.exp(x) for x in d]), unpaired, paired, corr(la, lb)


def main():
    out = sys.argv[1]
    tags = sys.argv[2:] or ["before", "after"]
    con = sqlite3.connect(f"{out}/aa.db")
    runs = [l.split() for l in open(f"{out}/runs.txt") if l.strip()]
    disk = [list(map(int, l.split())) for l in open(f"{out}/disk.log") if len(l.split()) == 4]
    for tag in tags:
        mine = [r for r in runs if r[0].split(".")[0] == tag]
        per_phase, busy, trials, others, io = {}, 0, 0, [], []
        dev = {True: [], False: []}
        load = []
        for r in mine:
            data = {}
            for tg, wl, rep, ph, ops, dist in con.execute(
                "select t.target, t.workload, t.rep, p.name, p.ops_per_s, t.disturbance "
                "from trials t join phases p on p.trial_id = t.id "
                "where t.run_id = ? and t.status = 'ok'",
                (r[1],),
            ):
                data.setdefault((wl, ph), {}).setdefault(tg, {})[rep] = (ops, json.loads(dist or "{}"))
            for v in data.values():
                for tg in v:
                    med = st.median(x[0] for x in v[tg].values())
                    for ops, d in v[tg].values():
                        if ops > 0 and med > 0:
                            y = -math.log(ops / med)
                            dev[bool(d.get("busy"))].append(y)
                            mb = (d.get("others_device_bytes") or 0) / 1e6
                            load.append((y, d.get("others_cpu_share") or 0, math.log1p(mb)))
                v.update({tg: {k: x[0] for k, x in v[tg].items()} for tg in v})
            for key, v in data.items():
                reps = sorted(set(v.get("a", {})) & set(v.get("b", {})))
                xa, xb = [v["a"][k] for k in reps], [v["b"][k] for k in reps]
                if len(reps) >= 3 and min(xa + xb) > 0:
                    per_phase.setdefault(key, []).append(phase_stats(xa, xb))
            for dist, el in con.execute(
                "select disturbance, elapsed_s from trials where run_id = ?", (r[1],)
            ):
                d = json.loads(dist or "{}")
                trials += 1
                busy += bool(d.get("busy"))
                others.append((d.get("others_device_bytes") or 0) / 1e6 / max(el or 1, 1e-3))
            w = [s for s in disk if int(r[2]) <= s[0] <= int(r[3])]
            if len(w) > 2:
                dt = w[-1][0] - w[0][0]
                io.append([(w[-1][i] - w[0][i]) * f / dt for i, f in ((1, 512e-6), (2, 512e-6), (3, 60))])
        print(f"== {tag}: {len(mine)} runs, {trials} trials, {100 * busy / max(trials, 1):.0f}% busy, "
              f"others' MB/s median {st.median(others) if others else float('nan'):.0f}")
        rms = lambda xs: 100 * math.sqrt(st.mean([x * x for x in xs])) if xs else float("nan")
        r2 = r_squared(*zip(*load)) if len(load) > 3 else float("nan")
        print(f"   quiet sd {rms(dev[False]):.1f}% (n={len(dev[False])}), busy sd {rms(dev[True]):.1f}% "
              f"(n={len(dev[True])}); load R² {100 * r2:.0f}%")
        if io:
            print("   disk read %.0f MB/s, write %.0f MB/s, drop_caches %.0f/min (medians over runs)"
                  % tuple(st.median(c) for c in zip(*io)))
        print(f"   {'phase':24} {'CVa%':>5} {'CVb%':>5} {'CVr%':>5} {'unpaired±%':>10} {'paired±%':>8} {'r(a,b)':>6}")
        rows = []
        for (wl, ph), s in per_phase.items():
            m = [st.median(c) for c in zip(*s)]
            rows.append(m)
            print(f"   {wl + ' ' + ph:24} {100*m[0]:5.1f} {100*m[1]:5.1f} {100*m[2]:5.1f} {100*m[3]:10.1f} {100*m[4]:8.1f} {m[5]:6.2f}")
        if rows:
            m = [st.median(c) for c in zip(*rows)]
            print(f"   {'median of phases':24} {100*m[0]:5.1f} {100*m[1]:5.1f} {100*m[2]:5.1f} {100*m[3]:10.1f} {100*m[4]:8.1f} {m[5]:6.2f}")


if __name__ == "__main__":
    main()

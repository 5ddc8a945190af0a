#!/usr/bin/env python3
"""The agreement table of bench/price-validate.sh: per phase and filesystem, the measured
wall time (median of the repetitions) against the predicted one on PROFILE and on
`measured`, and whether the predicted ranking of the filesystems matches the measured one.

A pair of filesystems is *told apart* by the measurement when their repetitions' wall
times do not overlap (min-max), and by the prediction when the repetitions' predicted
times do not overlap and the medians differ by more than 3%. The ranking agrees on a pair
both tell apart when both put the same one first.

Usage: price-validate.py PROFILE RUN.json [RUN.json ...] (one filesystem per target)"""
import itertools
import json
import statistics
import sys

profile, paths = sys.argv[1], sys.argv[2:]
meas, pred = {}, {}  # (workload, phase, fs) -> [seconds]; (profile, wl, phase, fs) -> Range
order, fss = [], []
for path in paths:
    d = json.load(open(path))
    fs_of = {t["name"]: t["fstype"] for t in d["targets"]}
    fss += [fs for fs in fs_of.values() if fs not in fss]
    for t in d["trials"]:
        if t["status"] != "ok":
            continue
        for p in t["phases"]:
            k = (t["label"], p["name"])
            if k not in order:
                order.append(k)
            meas.setdefault(k + (fs_of[t["target"]],), []).append(p["wall_s"])
    for p in (d.get("predictions") or {}).get("phases", []):
        pred[(p["profile"], p["workload"], p["phase"], fs_of[p["target"]])] = p["predicted_s"]


def err(p, m):
    return (p / m - 1) * 100


print(f"{'phase':28} {'fs':6} {'measured':>9} {profile:>10} {'err':>6} {'measured*':>10} {'err':>6}")
errs = {profile: [], "measured": []}
for wl, ph in order:
    for fs in fss:
        m = meas.get((wl, ph, fs))
        if not m:
            continue
        mm = statistics.median(m)
        row = f"{(wl.split(':')[0] + '/' + ph)[:28]:28} {fs:6} {mm:9.3f}"
        for prof in (profile, "measured"):
            r = pred.get((prof, wl, ph, fs))
            if r is None:
                row += f" {'-':>10} {'-':>6}"
                continue
            e = err(r["median"], mm)
            errs[prof].append(e)
            row += f" {r['median']:10.3f} {e:+6.0f}%"
        print(row)
print("(seconds; err = predicted/measured - 1; measured* = priced on the run's own probe "
      "of the throttled device)")
for prof, es in errs.items():
    if not es:
        continue
    a = sorted(abs(e) for e in es)
    within = lambda x: sum(1 for e in a if e <= x)
    print(f"{prof}: {len(a)} phases, median |err| {statistics.median(a):.0f}%, "
          f"within 25%: {within(25)}, within 50%: {within(50)}, "
          f"within 2x (-50%..+100%): {sum(1 for e in es if -50 <= e <= 100)}")

for prof in (profile, "measured"):
    agree = disagree = only_meas = only_pred = neither = 0
    wrong = []
    for wl, ph in order:
        for a, b in itertools.combinations(fss, 2):
            ma, mb = meas.get((wl, ph, a)), meas.get((wl, ph, b))
            pa, pb = pred.get((prof, wl, ph, a)), pred.get((prof, wl, ph, b))
            if not (ma and mb and pa and pb):
                continue
            m_apart = max(ma) < min(mb) or max(mb) < min(ma)
            ratio = max(pa["median"], pb["median"]) / min(pa["median"], pb["median"])
            p_apart = (pa["max"] < pb["min"] or pb["max"] < pa["min"]) and ratio > 1.03
            if m_apart and p_apart:
                same = (statistics.median(ma) < statistics.median(mb)) == (pa["median"] < pb["median"])
                if same:
                    agree += 1
                else:
                    disagree += 1
                    wrong.append(f"{wl.split(':')[0]}/{ph} {a}-{b}")
            elif m_apart:
                only_meas += 1
            elif p_apart:
                only_pred += 1
            else:
                neither += 1
    both = agree + disagree
    share = f"{100 * agree / both:.0f}%" if both else "-"
    print(f"ranking on {prof}: both tell apart {both} pairs, same order in {agree} ({share}); "
          f"only measurement tells {only_meas}, only prediction {only_pred}, neither {neither}")
    if wrong:
        print("  reversed:", "; ".join(wrong))

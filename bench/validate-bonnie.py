#!/usr/bin/env python3
"""Summarises bench/validate-bonnie.sh output as Markdown tables: bonnie++ 2.00a vs fsarena
(like-for-like: --sync none --cache keep) vs fsarena defaults (--sync end --cache cold).
bonnie++ throughput is K/s (KiB/s); it is converted to MB/s (10^6 bytes/s) as K/s*1024/1e6."""
import csv, glob, json, statistics, sys

PHASES = [  # (fsarena phase, bonnie++ CSV field, unit)
    ("write_char", 9, "MB/s"), ("write_block", 11, "MB/s"), ("rewrite", 13, "MB/s"),
    ("read_char", 15, "MB/s"), ("read_block", 17, "MB/s"), ("seeks", 19, "/s"),
    ("seq_create", 26, "/s"), ("seq_stat", 28, "/s"), ("seq_delete", 30, "/s"),
    ("rand_create", 32, "/s"), ("rand_stat", 34, "/s"), ("rand_delete", 36, "/s"),
]

def bonnie(path):
    out = {p: [] for p, _, _ in PHASES}
    for row in csv.reader(open(path)):
        for p, i, unit in PHASES:
            v = row[i] if i < len(row) else ""
            if v and "+" not in v:
                x = float(v)
                out[p].append(x * 1024 / 1e6 if unit == "MB/s" else x)
            elif "+" in v:
                out[p].append(None)
    return out

def fsarena(paths):
    out = {p: [] for p, _, _ in PHASES}
    for path in paths:
        run = json.load(open(path))
        for t in run["trials"]:
            for ph in t["phases"]:
                if ph["name"] in out:
                    out[ph["name"]].append(ph[ph["primary"]])
    return out

def cell(xs):
    if not xs:
        return "–"
    if any(x is None for x in xs):
        return "+++++ (%d of %d)" % (sum(x is None for x in xs), len(xs))
    m = statistics.median(xs)
    fmt = (lambda v: "%.0f" % v) if m >= 100 else (lambda v: "%.2f" % v)
    return "%s (%s–%s)" % (fmt(m), fmt(min(xs)), fmt(max(xs)))

def ratio(a, b):
    if not a or not b or None in a or None in b:
        return "–"
    return "%.2f" % (statistics.median(a) / statistics.median(b))

out_dir, fslist = sys.argv[1], sys.argv[2:]
for fs in fslist:
    b = bonnie(f"{out_dir}/bonnie++-{fs}.csv")
    like = fsarena(sorted(glob.glob(f"{out_dir}/fsarena-like-{fs}-*.json")))
    dflt = fsarena([f"{out_dir}/fsarena-default-{fs}.json"])
    print(f"\n### {fs}\n")
    print("| phase | unit | bonnie++ 2.00a | fsarena like-for-like | like / bonnie++ | fsarena defaults |")
    print("|---|---|---|---|---|---|")
    for p, _, unit in PHASES:
        print(f"| {p} | {unit} | {cell(b[p])} | {cell(like[p])} | {ratio(like[p], b[p])} | {cell(dflt[p])} |")

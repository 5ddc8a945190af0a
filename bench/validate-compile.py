#!/usr/bin/env python3
"""Tabulates bench/validate-compile.sh: compilebench's eleven averages (median over the
repetitions) next to fsarena's compilebench_mb_per_s / compilebench_s for the same
statistic, and their ratio."""
import json
import re
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
NAMES = {
    "intial create": "initial_create", "create": "create", "patch": "patch",
    "compile": "compile", "clean": "clean", "read tree": "read_tree",
    "read compiled tree": "read_compiled_tree", "delete tree": "delete_tree",
    "delete compiled tree": "delete_compiled_tree", "stat tree": "stat_tree",
    "stat compiled tree": "stat_compiled_tree",
}
LINE = re.compile(r"^(.*) total runs (\d+) avg ([\d.]+) (MB/s|seconds) \(user ([\d.]+)s sys ([\d.]+)s\)")
for fs in sys.argv[2:]:
    cb = {}
    for f in sorted(out.glob(f"cb-{fs}-*.txt")):
        for line in f.read_text().splitlines():
            m = LINE.match(line)
            if m:
                cb.setdefault(NAMES[m[1]], []).append((int(m[2]), float(m[3]), m[4]))
    run = json.loads((out / f"fsarena-{fs}.json").read_text())
    fa = {}
    for t in run["trials"]:
        for p in t["phases"]:
            ex = p.get("extra", {})
            v = ex.get("compilebench_mb_per_s", ex.get("compilebench_s"))
            if p["name"] == "initial_create":
                v = p["mb_per_s"] * 1e6 / 2**20
            if v is not None:
                fa.setdefault(p["name"], []).append((int(ex.get("runs", 1)), v))
    print(f"\n{fs}: median over repetitions (runs per repetition)")
    print(f"{'statistic':22} {'unit':8} {'compilebench':>14} {'fsarena':>14} {'fsarena/cb':>10}")
    for name in NAMES.values():
        if name not in cb or name not in fa:
            continue
        c = statistics.median(x[1] for x in cb[name])
        f = statistics.median(x[1] for x in fa[name])
        unit = cb[name][0][2]
        runs = f"{cb[name][0][0]}/{fa[name][0][0]}"
        print(f"{name:22} {unit:8} {c:10.2f} ({runs:>3}) {f:14.2f} {f / c if c else float('nan'):10.2f}")

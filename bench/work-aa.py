#!/usr/bin/env python3
"""Two identical ext4 targets through the quick suite's workloads, N runs: how often does
the verdict tell them apart on work (or on time)?

    python3 bench/work-aa.py run  FSARENA DIR [RUNS]   # RUNS runs of DIR/plan.toml
    python3 bench/work-aa.py judge FSARENA DIR         # re-judge every stored run

`run` writes DIR/plan.toml (targets ext4-a and ext4-b, the quick suite's workloads, 3
repetitions, 1 GiB images) unless it exists, then runs it RUNS times (default 10) into
DIR/db. `judge` exports each stored run as JSON with FSARENA (so a newer binary re-judges
old measurements) and prints, per run, the pairs told apart on time and on work, and
whether any work figure was told apart with its whole interval beyond the margin.
"""

import json
import os
import subprocess
import sys

PLAN = """# Two identical ext4 targets through the quick suite's workloads (bench/work-aa.py).
[defaults]
size = "1GiB"
reps = 3

[[target]]
name = "ext4-a"
fs = "ext4"

[[target]]
name = "ext4-b"
fs = "ext4"

[[workload]]
kind = "bonnie"
size = "256MiB"
seeks = 8000

[[workload]]
kind = "bonnie-files"
files = 24

[[workload]]
kind = "postmark"
number = 5000
transactions = 10000

[[workload]]
kind = "smallfiles"
files = 20000
size_max = "4KiB"

[[workload]]
kind = "dbrandom"
scale = 0.1
cycles = 100

[[workload]]
kind = "metascan"
scale = 0.5
passes = 2
"""


def run(fsarena, d, n):
    os.makedirs(d, exist_ok=True)
    plan = os.path.join(d, "plan.toml")
    if not os.path.exists(plan):
        with open(plan, "w") as f:
            f.write(PLAN)
    for i in range(n):
        out = subprocess.run(
            [fsarena, "--db", os.path.join(d, "db"), "run", "--plan", plan, "--quiet"],
            capture_output=True,
            text=True,
        )
        print(f"run {i + 1}: exit {out.returncode}", flush=True)


def judge(fsarena, d):
    db = os.path.join(d, "db")
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ids = [r[0] for r in con.execute("SELECT id FROM runs WHERE status = 'complete'")]
    con.close()
    if not ids:
        sys.exit(f"no complete runs in {db}")
    beyond_runs = 0
    print(
        "| run | work pairs tested | told apart on work | beyond the margin | same on work "
        "| told apart on time |"
    )
    print("|---|---|---|---|---|---|")
    for rid in sorted(ids):
        doc = json.loads(
            subprocess.run(
                [fsarena, "--db", db, "export", "--json", rid],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        tested = apart = beyond = same = time_apart = 0
        for v in doc.get("verdicts", []):
            margin = v["family"]["margin"]
            for p in v["places"][1:]:
                if p["outcome"] is None or p["interval"] is None:
                    continue
                if v["figure"] == "time":
                    time_apart += p["outcome"] == "apart"
                    continue
                tested += 1
                same += p["outcome"] == "within"
                if p["outcome"] == "apart":
                    apart += 1
                    lo = p["interval"][0]
                    beyond += lo > 1 + margin
        beyond_runs += beyond > 0
        print(f"| {rid} | {tested} | {apart} | {beyond} | {same} | {time_apart} |")
    print(f"\nruns with a work figure told apart beyond the margin: {beyond_runs} of {len(ids)}")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("run", "judge"):
        sys.exit(__doc__)
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 10)
    else:
        judge(sys.argv[2], sys.argv[3])

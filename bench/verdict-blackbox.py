#!/usr/bin/env python3
"""Black-box checks of the verdict engine's promises with the shipped binary (issue 54).

Run documents whose figures are drawn from known distributions are stored with
`fsarena import`, then judged by `fsarena show` and `fsarena compare`, as a reader who
distrusts the code would check it:

  python3 bench/verdict-blackbox.py gate    N [BIN]   # the CI gate at its threshold
  python3 bench/verdict-blackbox.py unequal N [BIN]   # equal speed, spreads 1% and 10%

gate: a real `smallfiles` run (10 repetitions on a directory) is the template; each try
draws A and B around its per-phase means at CV 3% (lognormal), B's `create` truly 10%
slower or unchanged, and runs `compare A B --fail-if-slower 10`. A pilot pair first asks
the gate how many repetitions a side it needs ("run N repetitions per side"); the tries
then use N. Printed: how often an unchanged B passes (exit 0) and a 10%-slower B fails
(exit 3).

unequal: the fixture run (tests/fixtures/run.json: 15 phases of bonnie, bonnie-files and
postmark on ext4 and tmpfs) with every headline redrawn at the same mean, ext4 at CV 1%
and tmpfs at CV 10%, three repetitions; a run "calls a difference" when its verdict
(`fsarena show`, one line per phase at 1000 columns) tells any pair apart. Printed: the
share of runs that did (promise: at most 5%).
"""
import copy
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fsarena(bin_, *args, cols="1000"):
    env = dict(os.environ, COLUMNS=cols)
    p = subprocess.run([bin_, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def scale_phase(p, f):
    """Every speed of phase `p` times f, every time divided by it."""
    for k in ("ops_per_s", "mb_per_s"):
        if isinstance(p.get(k), (int, float)):
            p[k] = p[k] * f
    if isinstance(p.get("wall_s"), (int, float)) and p["wall_s"] > 0:
        p["wall_s"] = p["wall_s"] / f
    extra = p.get("extra") or {}
    for k, v in list(extra.items()):
        if isinstance(v, (int, float)) and k.endswith("_per_s"):
            extra[k] = v * f
        elif isinstance(v, (int, float)) and k.endswith("_s") and v > 0:
            extra[k] = v / f


def redraw(template, run_id, reps, cv_of, slow_of, rng):
    """A copy of `template` with `reps` repetitions per target, each phase drawn around the
    template's geometric mean at CV `cv_of(target)`, times `slow_of(target, phase)`."""
    doc = copy.deepcopy(template)
    doc["run_id"] = run_id
    doc["summaries"] = []
    by_target = {}
    for t in template["trials"]:
        by_target.setdefault(t["target"], []).append(t)
    trials = []
    for rep in range(1, reps + 1):
        for target, ts in by_target.items():
            t = copy.deepcopy(ts[0])
            t["rep"] = rep
            t["status"] = "ok"
            for p in t["phases"]:
                # Start every repetition from the template's geometric mean of the phase.
                vals = [q for x in ts for q in x["phases"] if q["name"] == p["name"]]
                gm = math.exp(sum(math.log(max(q["ops_per_s"], 1e-9)) for q in vals) / len(vals))
                scale_phase(p, gm / max(p["ops_per_s"], 1e-9))
                f = math.exp(cv_of(target) * rng.gauss(0, 1)) * slow_of(target, p["name"])
                scale_phase(p, f)
            trials.append(t)
    doc["trials"] = trials
    doc["policy"]["reps"] = reps
    return doc


def store(bin_, db, doc, work):
    path = os.path.join(work, doc["run_id"] + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    code, out, err = fsarena(bin_, "import", "--db", db, path)
    if code != 0:
        sys.exit(f"import failed: {err}")


def gate(n, bin_):
    work = tempfile.mkdtemp(prefix="fsarena-blackbox-")
    d = os.path.join(work, "dir")
    os.mkdir(d)
    db = os.path.join(work, "b.db")
    out = os.path.join(work, "t.json")
    code, _, err = fsarena(bin_, "run", "--db", db, "smallfiles:files=300", "--dir", d,
                           "--reps", "3", "--quiet", "--json", out)
    if code != 0:
        sys.exit(f"template run failed: {err}")
    template = json.load(open(out))
    rng = random.Random(54)
    cv = 0.03
    counter = iter(range(10**6))

    def pair(reps, slow):
        a = redraw(template, f"20270101-000000-{next(counter):04x}", reps, lambda t: cv,
                   lambda t, p: 1.0, rng)
        b = redraw(template, f"20270101-000000-{next(counter):04x}", reps, lambda t: cv,
                   lambda t, p: slow if p == "create" else 1.0, rng)
        store(bin_, db, a, work)
        store(bin_, db, b, work)
        code, text, _ = fsarena(bin_, "compare", "--db", db, a["run_id"], b["run_id"],
                                "--fail-if-slower", "10")
        return code, text

    code, text = pair(10, 1.0)
    m = re.search(r"run (\d+) repetitions per side", text)
    reps = int(m.group(1)) if m else 10
    print(f"pilot at 10 repetitions a side: exit {code}; the gate asks for {reps}")
    passed = caught = 0
    for i in range(n):
        c, _ = pair(reps, 1.0)
        passed += c == 0
        c, _ = pair(reps, 0.9)
        caught += c == 3
    print(f"gate, smallfiles ({len(template['trials'][0]['phases'])} phases), CV 3%, "
          f"{reps} repetitions a side: unchanged B passed {passed} of {n}; "
          f"create truly 10% slower failed it (exit 3) {caught} of {n}")
    shutil.rmtree(work)


def unequal(n, bin_):
    work = tempfile.mkdtemp(prefix="fsarena-blackbox-")
    db = os.path.join(work, "u.db")
    template = json.load(open(os.path.join(ROOT, "tests/fixtures/run.json")))
    rng = random.Random(1010)
    told = 0
    for i in range(n):
        # The same mean on both targets: tmpfs takes ext4's trials as its template.
        ext4 = [t for t in template["trials"] if t["target"] == "ext4"]
        same = ext4 + [dict(copy.deepcopy(t), target="tmpfs") for t in ext4]
        doc = redraw(dict(template, trials=same), f"20270102-000000-{i:04x}", 3,
                     lambda t: 0.01 if t == "ext4" else 0.10, lambda t, p: 1.0, rng)
        store(bin_, db, doc, work)
        code, text, err = fsarena(bin_, "show", "--db", db, doc["run_id"])
        if code != 0:
            sys.exit(f"show failed: {err}")
        apart = [l.strip() for l in text.splitlines() if re.search(r"slower \[", l)]
        told += bool(apart)
    print(f"equal speed, ext4 CV 1% and tmpfs CV 10%, 3 repetitions, 15 phases: "
          f"{told} of {n} runs told them apart somewhere ({100.0 * told / n:.1f}%)")
    shutil.rmtree(work)


if __name__ == "__main__":
    mode, n = sys.argv[1], int(sys.argv[2])
    bin_ = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "target/release/fsarena")
    {"gate": gate, "unequal": unequal}[mode](n, bin_)

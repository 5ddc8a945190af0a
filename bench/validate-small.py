#!/usr/bin/env python3
"""Summarises bench/validate-small.sh output as Markdown tables.

smallfiles vs fs_mark: files/s of the create phase (fsarena's `files_per_s` note = files /
phase time) against fs_mark's Files/sec (files / loop time) and against fs_mark's rate
without its "App Overhead" (name generation, a mkdir per file, gettimeofday), i.e.
files / (time spent in creat + write + fsync + close).

dbrandom vs fio: p50/p99 latencies in microseconds (fsarena's HDR histograms; fio's clat
percentiles, or its sync latency percentiles) and reads/s = reads / run time. A "warm" run
whose device counters show reads (fsarena: dev_read_bytes of the random phase; fio: the
loop device's read_ios in disk_util) was not warm -- on a shared machine another process's
drop_caches evicted the files -- and is left out of the medians; the table says how many
runs were kept."""
import glob, json, re, statistics, sys

out_dir, reps, fslist = sys.argv[1], int(sys.argv[2]), sys.argv[3:]


def cell(xs, fmt=None):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    m = statistics.median(xs)
    fmt = fmt or ((lambda v: "%.0f" % v) if m >= 100 else (lambda v: "%.1f" % v))
    if len(xs) == 1:
        return fmt(m)
    return "%s (%s–%s)" % (fmt(m), fmt(min(xs)), fmt(max(xs)))


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    a, b = med(a), med(b)
    return "%.2f" % (a / b) if a and b else "–"


def fsmark(path):
    """(files/s, files/s without app overhead) from an fs_mark output file."""
    lines = open(path).read().splitlines()
    for i, l in enumerate(lines):
        if l.strip().startswith("FSUse%"):
            f = lines[i + 1].split()
            count, fps, ovh_us = int(f[1]), float(f[3]), float(f[4])
            loop_s = count / fps
            return fps, count / (loop_s - ovh_us / 1e6)
    raise SystemExit(f"no result line in {path}")


def phase(path, name):
    run = json.load(open(path))
    for t in run["trials"]:
        if t["status"] != "ok":
            raise SystemExit(f"{path}: trial failed: {t.get('error')}")
        for p in t["phases"]:
            if p["name"] == name:
                return p
    raise SystemExit(f"{path}: no phase {name}")


def op(p, name):
    for o in p["lat_by_op"]:
        if o["op"] == name:
            return o
    return None


def dev_reads(fio_run):
    """Read I/Os of the devices under a fio run (its disk_util section)."""
    return sum(d["read_ios"] for d in fio_run.get("disk_util", []))


def files(pattern):
    return sorted(glob.glob(f"{out_dir}/{pattern}"))


# ---- smallfiles vs fs_mark
scen = sorted({re.match(r"fsmark-(\w+)-", f.split("/")[-1]).group(1)
               for f in files("fsmark-*.txt")})
if scen:
    print("\n### smallfiles create vs fs_mark (files/s)\n")
    print("| scenario | fs | fs_mark Files/sec | fs_mark w/o app overhead | fsarena flat | "
          "flat / fs_mark | flat / w/o overhead | fsarena tree | fsarena fsyncs/file, p50 µs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for sc in scen:
        for fs in fslist:
            fm = [fsmark(f) for f in files(f"fsmark-{sc}-{fs}-*.txt")]
            if not fm:
                continue
            flat = [phase(f, "create") for f in files(f"sf-{sc}-flat-{fs}-*.json")]
            tree = [phase(f, "create") for f in files(f"sf-{sc}-tree-{fs}-*.json")]
            a = [x[0] for x in fm]
            b = [x[1] for x in fm]
            fl = [p["extra"]["files_per_s"] for p in flat]
            tr = [p["extra"]["files_per_s"] for p in tree]
            syncs = "–"
            fsyncs = [op(p, "fsync") for p in flat]
            if all(fsyncs) and fsyncs:
                n = [o["count"] / op(p, "create")["count"] for o, p in zip(fsyncs, flat)]
                syncs = "%.2f, %s" % (med(n), cell([o["lat_us"]["p50"] for o in fsyncs]))
            print(f"| {sc} | {fs} | {cell(a)} | {cell(b)} | {cell(fl)} | {ratio(fl, a)} | "
                  f"{ratio(fl, b)} | {cell(tr)} | {syncs} |")

# ---- dbrandom vs fio
runs = files("db-*.json")
if runs:
    print("\n### dbrandom vs fio (latency µs, p50 / p99; reads/s)\n")
    print("| fs | cache | tool | runs kept | reads/s | read p50 | read p99 | write p50 | "
          "write p99 | fsync p50 | fsync p99 | ios: reads/writes/fsyncs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for fs in fslist:
        for mode in ("cold", "warm"):
            ours = [phase(f, "random") for f in files(f"db-{fs}-{mode}-*.json")]
            if not ours:
                continue
            total = len(ours)
            if mode == "warm":
                ours = [p for p in ours if (p.get("dev_read_bytes") or 0) < 1 << 20]
            kept = f"{len(ours)} of {total}"
            rows = []
            pct = lambda o, k: o["lat_us"][k] if o else None
            rps = [op(p, "read")["count"] / p["wall_s"] for p in ours]
            r = [op(p, "read") for p in ours]
            w = [op(p, "write") for p in ours]
            s = [op(p, "fsync") for p in ours]
            ios = "%d/%d/%d" % (r[0]["count"], w[0]["count"], s[0]["count"])
            rows.append(("fsarena dbrandom", kept, rps,
                         [pct(o, "p50") for o in r], [pct(o, "p99") for o in r],
                         [pct(o, "p50") for o in w], [pct(o, "p99") for o in w],
                         [pct(o, "p50") for o in s], [pct(o, "p99") for o in s], ios))
            for durable in ("sync", "fsync"):
                runs = [json.load(open(f)) for f in files(f"fio-{durable}-{fs}-{mode}-*.json")]
                if not runs:
                    continue
                if mode == "warm":
                    jobs = [r["jobs"][0] for r in runs if dev_reads(r) < 256]
                else:
                    jobs = [r["jobs"][0] for r in runs]
                kept = f"{len(jobs)} of {len(runs)}"
                if not jobs:
                    continue
                cp = lambda j, d, k: j[d]["clat_ns"]["percentile"][k] / 1e3
                sp = lambda j, k: (j["sync"]["lat_ns"]["percentile"][k] / 1e3
                                   if j["sync"]["total_ios"] else None)
                rps = [j["read"]["total_ios"] / (j["job_runtime"] / 1e3) for j in jobs]
                ios = "%d/%d/%d" % (jobs[0]["read"]["total_ios"], jobs[0]["write"]["total_ios"],
                                    jobs[0]["sync"]["total_ios"])
                label = "fio --sync=1 (O_SYNC writes)" if durable == "sync" else "fio --fsync=1"
                rows.append((label, kept, rps,
                             [cp(j, "read", "50.000000") for j in jobs],
                             [cp(j, "read", "99.000000") for j in jobs],
                             [cp(j, "write", "50.000000") for j in jobs],
                             [cp(j, "write", "99.000000") for j in jobs],
                             [sp(j, "50.000000") for j in jobs],
                             [sp(j, "99.000000") for j in jobs], ios))
            for label, kept, *cols, ios in rows:
                print(f"| {fs} | {mode} | {label} | {kept} | " + " | ".join(cell(c) for c in cols)
                      + f" | {ios} |")

# ---- dbrandom vs fio O_SYNC, paired by repetition (adjacent in time, so they share the
# host's momentary flush latency): fio's write+sync p50 over dbrandom's write p50 + fsync
# p50, and reads/s.
if runs:
    print("\n### dbrandom vs fio --sync=1, paired by repetition\n")
    print("| fs | cache | rep | dbrandom write+fsync p50 µs | fio O_SYNC write p50 µs | ratio | "
          "dbrandom reads/s | fio reads/s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fs in fslist:
        for mode in ("cold", "warm"):
            for rep in range(1, reps + 1):
                a, b = files(f"db-{fs}-{mode}-{rep}.json"), files(f"fio-sync-{fs}-{mode}-{rep}.json")
                if not a or not b:
                    continue
                p, r = phase(a[0], "random"), json.load(open(b[0]))
                j = r["jobs"][0]
                warm_miss = mode == "warm" and ((p.get("dev_read_bytes") or 0) >= 1 << 20 or
                                                dev_reads(r) >= 256)
                if warm_miss:
                    continue
                ours = op(p, "write")["lat_us"]["p50"] + op(p, "fsync")["lat_us"]["p50"]
                theirs = j["write"]["clat_ns"]["percentile"]["50.000000"] / 1e3
                rps = op(p, "read")["count"] / p["wall_s"]
                frps = j["read"]["total_ios"] / (j["job_runtime"] / 1e3)
                f = lambda x: f"{x:.0f}" if x >= 100 else f"{x:.1f}"
                print(f"| {fs} | {mode} | {rep} | {f(ours)} | {f(theirs)} | "
                      f"{theirs / ours:.2f} | {rps:.0f} | {frps:.0f} | {frps / rps:.2f} |")

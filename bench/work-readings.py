#!/usr/bin/env python3
"""Independent readings of fsarena's per-phase work figures (issue 53).

Runs an fsarena command and, beside it, reads the target's loop device counters *itself*
at the moments fsarena reads them, and optionally records every block request the kernel
completes (perf) and every fsync-family call (strace); then compares, phase by phase, with
the figures fsarena wrote to its --json document. Root; Linux with inotify. Usage:

  bench/work-readings.py record OUT -- FSARENA RUN ... --image-dir DIR --json J ...
      WORK_PERF=1 [WORK_PERF_EVENTS=block:block_rq_complete,...]  also run perf record
      WORK_STRACE=1   run fsarena under strace -f -ttt --seccomp-bpf -C (fsync family)
  bench/work-readings.py compare OUT...            per repetition: stat by hand vs fsarena
  bench/work-readings.py summary OUT...            the same, summed over repetitions
  bench/work-readings.py requests OUT...           traced requests vs fsarena (WORK_PERF)
  bench/work-readings.py summary-requests OUT...   the same, summed over repetitions
  bench/work-readings.py fsyncs OUT OUT/strace.log fsync-family calls per phase
  bench/work-readings.py perop OUT CSV             per-operation figures of the CSV export
  bench/work-readings.py outside OUT...            device work of each trial outside phases

--image-dir must be a directory of this run alone (the loop devices are found by it).
docs/validation/2026-12-work-figures.md is the record made with it.

How the stat reading is made (nothing of fsarena's code is used):

* Every loop device whose backing file lies under the run's --image-dir is found by
  polling /sys/block/loop*/loop/backing_file every 2 ms. Its /sys/block/loopN/stat is
  opened once and kept open, and an inotify watch (IN_OPEN) is put on it. Loop devices
  are shared with the rest of the machine: a device handed to an image of another run
  is followed ("foreign") and its openings from then on are not ours.
* Whenever any process opens that stat file -- fsarena does for every reading of its
  counters -- this script (at real-time priority, so that it wakes at once) re-reads the
  file through its own descriptor (pread at 0: no IN_OPEN of its own), stamping the
  reading with CLOCK_MONOTONIC before and after. It also reads /proc/PID/stat of the
  command (utime, stime, cutime, cstime: CPU in clock ticks).
* The fields are decoded after the kernel's Documentation/block/stat.rst: 1 read I/Os,
  3 read sectors, 5 write I/Os, 7 write sectors, 12 discard I/Os, 14 discard sectors,
  16 flush I/Os; sectors are 512 bytes whatever the device's block size.
* A phase is given the pair of *consecutive* openings of its trial's device whose
  distance in time is its `wall_s` from the JSON (fsarena reads the counters just before
  its clock starts and just after it stops; nothing opens the file during a phase); the
  n-th trial of the JSON is the n-th image attached. Its figures are the differences of
  this script's own readings; the JSON's figures are only compared with them.

What the stat reading shares with fsarena: the kernel's counters and the moments they are
read at (the openings tell the moments). It is independent of fsarena's parsing, its
arithmetic, which phase a reading is charged to, and its export. The traced requests
(WORK_PERF) are independent of the counters too: every request the block layer completes
on the device between the two readings, counted by operation (rwbs) and size.
"""
import ctypes
import ctypes.util
import glob
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time

IN_OPEN = 0x20
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def image_dir_of(cmd):
    for i, a in enumerate(cmd):
        if a == "--image-dir" and i + 1 < len(cmd):
            return os.path.realpath(cmd[i + 1])
        if a.startswith("--image-dir="):
            return os.path.realpath(a.split("=", 1)[1])
    sys.exit("the fsarena command needs --image-dir DIR (a directory of this run alone)")


def record(out, cmd):
    os.makedirs(out, exist_ok=True)
    imgdir = image_dir_of(cmd)
    ifd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if ifd < 0:
        sys.exit("inotify_init1 failed")
    watched = {}  # wd -> (dev, fd)
    devs = {}  # dev -> wd
    lock = threading.Lock()
    log = open(os.path.join(out, "readings.jsonl"), "w")
    proc = None
    stop = threading.Event()

    def proc_cpu():
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                s = f.read()
            fl = s.rsplit(") ", 1)[1].split()
            # after ") ": state(3) ... utime is field 14 -> index 11
            return [int(fl[11]), int(fl[12]), int(fl[13]), int(fl[14])]
        except Exception:
            return None

    def reading(dev, fd, why):
        # Stamped before and after: the counters were read between the two (a stamp
        # taken only after could be late by a preemption on a busy machine).
        t0 = now_ns()
        raw = os.pread(fd, 4096, 0).decode()
        t = now_ns()
        rec = {"t_ns": t, "t0_ns": t0, "dev": dev, "why": why, "stat": [int(x) for x in raw.split()],
               "cpu_ticks": proc_cpu() if proc else None}
        log.write(json.dumps(rec) + "\n")

    def discover():
        # Polls the loop devices' backing files; logs every change of attachment.
        seen = {}
        while not stop.is_set():
            for bf in glob.glob("/sys/block/loop*/loop/backing_file"):
                dev = bf.split("/")[3]
                try:
                    back = open(bf).read().strip()
                except OSError:
                    back = ""
                if seen.get(dev) == back:
                    continue
                seen[dev] = back
                if not back.startswith(imgdir + "/"):
                    if dev in devs:  # one of ours, now another's (or detached)
                        log.write(json.dumps({"t_ns": now_ns(), "dev": dev, "foreign": back}) + "\n")
                    continue
                with lock:
                    if dev not in devs:
                        fd = os.open(f"/sys/block/{dev}/stat", os.O_RDONLY)
                        wd = libc.inotify_add_watch(ifd, f"/sys/block/{dev}/stat".encode(), IN_OPEN)
                        watched[wd] = (dev, fd)
                        devs[dev] = wd
                    wd = devs[dev]
                    devno = open(f"/sys/block/{dev}/dev").read().strip()
                    log.write(json.dumps({"t_ns": now_ns(), "dev": dev, "devno": devno,
                                          "attached": back}) + "\n")
                    reading(dev, watched[wd][1], "attached")
            time.sleep(0.002)

    if os.environ.get("WORK_FIFO", "1") == "1":
        # Wake up at once when fsarena opens the file: real-time priority for this
        # reader (it sleeps in poll() but for microseconds per reading).
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        except OSError:
            pass
    th = threading.Thread(target=discover, daemon=True)
    th.start()
    perf = None
    if os.environ.get("WORK_PERF"):
        # A second reading of the same windows: every request the block layer completes
        # (tracepoint block:block_rq_complete), machine-wide, stamped with CLOCK_MONOTONIC.
        ev = os.environ.get("WORK_PERF_EVENTS", "block:block_rq_complete")
        perf = subprocess.Popen(preexec_fn=lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)), args=["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e",
                                 ev, "-a", "-o",
                                 os.path.join(out, "perf.data")])
        time.sleep(2)
    if os.environ.get("WORK_STRACE"):
        # fsync-family calls of fsarena and every thread and child, stamped (-ttt,
        # CLOCK_REALTIME); seccomp-bpf stops only at the traced calls.
        cmd = ["strace", "-f", "-ttt", "--seccomp-bpf", "-C", "-e",
               "trace=fsync,fdatasync,syncfs,sync_file_range,sync,msync", "-o",
               os.path.join(out, "strace.log")] + cmd
    time.sleep(0.05)
    t0, t0_real = now_ns(), time.time_ns()
    proc = subprocess.Popen(cmd, preexec_fn=lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)), stdout=open(os.path.join(out, "fsarena.out"), "w"),
                            stderr=open(os.path.join(out, "fsarena.err"), "w"))
    with open(os.path.join(out, "command.json"), "w") as f:
        json.dump({"cmd": cmd, "pid": proc.pid, "t0_ns": t0, "t0_real_ns": t0_real, "clk_tck": os.sysconf("SC_CLK_TCK")}, f)
    poll = select.poll()
    poll.register(ifd, select.POLLIN)
    while True:
        ev = poll.poll(50)
        if ev:
            try:
                buf = os.read(ifd, 65536)
            except BlockingIOError:
                buf = b""
            off = 0
            with lock:
                while off < len(buf):
                    wd, mask, _cookie, ln = struct.unpack_from("iIII", buf, off)
                    off += 16 + ln
                    if wd in watched and mask & IN_OPEN:
                        dev, fd = watched[wd]
                        reading(dev, fd, "open")
        elif proc.poll() is not None:
            break
    stop.set()
    th.join()
    if perf:
        perf.send_signal(2)
        perf.wait()
    log.close()
    return proc.returncode


FIELDS = [  # (name, stat index, multiplier)
    ("dev_read_ios", 0, 1),
    ("dev_read_bytes", 2, 512),
    ("dev_write_ios", 4, 1),
    ("dev_write_bytes", 6, 512),
    ("dev_discards", 11, 1),
    ("dev_discard_bytes", 13, 512),
    ("dev_flushes", 15, 1),
]


def load(out):
    rows = [json.loads(l) for l in open(os.path.join(out, "readings.jsonl"))]
    meta = json.load(open(os.path.join(out, "command.json")))
    cmd = meta["cmd"]
    jpath = cmd[cmd.index("--json") + 1]
    doc = json.load(open(jpath))
    return rows, meta, doc


def match(out):
    """Pairs each phase of the JSON with two consecutive openings of its device's stat
    file: (trial, phase, start reading, end reading, distance - wall_s).

    Each trial makes a fresh image, attached to a loop device: the openings of a trial are
    those of its device from its image's attachment until the next attachment (or until
    the device is given to an image not of this run); the n-th trial of the JSON is the
    n-th image attached. Within a trial the pairs are chosen in order, each phase's start
    reading after the previous phase's end reading (a new opening), minimising the summed
    deviation of the distances from wall_s + 5 ms (fsarena scans /proc for the kernel
    threads' CPU between its start reading and its clock start); a pair must lie within
    -10 ms .. +400 ms of wall_s."""
    rows, meta, doc = load(out)
    rows.sort(key=lambda r: r["t_ns"])
    segs, cur_dev = [], None
    for r in rows:
        if "attached" in r:
            if not segs or segs[-1][0] != r["attached"]:
                segs.append((r["attached"], []))
            cur_dev = r["dev"]
        elif "foreign" in r and r["dev"] == cur_dev:
            cur_dev = None
        elif r.get("why") == "open" and r["dev"] == cur_dev:
            segs[-1][1].append(r)
    trials = doc["trials"]
    if len(segs) != len(trials):
        sys.exit(f"{out}: {len(trials)} trials in the JSON but {len(segs)} images attached")
    res = []
    for tr, (_img, opens) in zip(trials, segs):
        res += match_trial(tr, opens)
    return res, meta, doc


def match_trial(tr, opens):
    phases = tr["phases"]
    m, n = len(opens), len(phases)
    INF = float("inf")

    def cost(k, i):
        a, b = opens[i], opens[i + 1]
        d = (b["t_ns"] - a["t_ns"]) / 1e9 - phases[k]["wall_s"]
        if not -0.010 <= d <= 0.4:
            return INF, None
        return abs(d - 0.005), d

    # f[k][i]: least cost with phase k on pair (i, i+1); back pointers in g.
    f = [[INF] * m for _ in range(n)]
    g = [[None] * m for _ in range(n)]
    for k in range(n):
        best, arg = (0.0, None) if k == 0 else (INF, None)
        for i in range(m - 1):
            if k > 0 and i >= 2 and f[k - 1][i - 2] < best:
                best, arg = f[k - 1][i - 2], i - 2
            c, _ = cost(k, i)
            if best + c < f[k][i]:
                f[k][i], g[k][i] = best + c, arg
    i = min(range(m), key=lambda j: f[n - 1][j]) if m and n else None
    if i is None or f[n - 1][i] == INF:
        return [(tr, ph, None, None, None) for ph in phases]
    res = [None] * n
    for k in range(n - 1, -1, -1):
        res[k] = (tr, phases[k], opens[i], opens[i + 1], cost(k, i)[1])
        i = g[k][i]
    return res


def pct(a, b):
    if a == b:
        return 0.0
    if b == 0:
        return float("inf")
    return (a - b) / b * 100


def compare(outs):
    print("| workload | rep | phase | figure | fsarena | by hand | diff % |")
    print("|---|---|---|---|---:|---:|---:|")
    summary = {}
    cpu_lines = []
    for out in outs:
        res, meta, doc = match(out)
        tck = meta["clk_tck"]
        for tr, ph, a, b, d in res:
            wl = tr.get("workload", "?")
            rep = tr.get("rep", tr.get("repetition", "?"))
            if a is None:
                print(f"| {wl} | {rep} | {ph['name']} | (no matching pair of readings) | | | |")
                continue
            for name, idx, mul in FIELDS:
                mine = (b["stat"][idx] - a["stat"][idx]) * mul
                theirs = ph.get(name)
                dp = pct(theirs, mine) if theirs is not None else None
                key = (wl, ph["name"], name)
                summary.setdefault(key, []).append((theirs, mine))
                print(f"| {wl} | {rep} | {ph['name']} | {name} | {theirs} | {mine} | "
                      f"{'n/a' if dp is None else f'{dp:+.2f}'} |")
            if a.get("cpu_ticks") and b.get("cpu_ticks"):
                ca, cb = a["cpu_ticks"], b["cpu_ticks"]
                u = (cb[0] - ca[0] + cb[2] - ca[2]) / tck
                s = (cb[1] - ca[1] + cb[3] - ca[3]) / tck
                cpu_lines.append((wl, rep, ph["name"], ph["cpu_user_s"], u, ph["cpu_sys_s"], s, d))
    print()
    print("CPU (fsarena's getrusage self+children vs /proc/PID/stat utime+cutime, stime+cstime,"
          f" in ticks of 1/{tck} s) and the pairing offset (reading distance minus wall_s):")
    print()
    print("| workload | rep | phase | cpu_user_s | by hand | cpu_sys_s | by hand | offset ms |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for wl, rep, pn, fu, u, fs_, s, d in cpu_lines:
        print(f"| {wl} | {rep} | {pn} | {fu:.3f} | {u:.2f} | {fs_:.3f} | {s:.2f} | {d*1000:.1f} |")
    worst = max((abs(pct(t, m)) for v in summary.values() for t, m in v if t is not None), default=0)
    exact = sum(1 for v in summary.values() for t, m in v if t == m)
    total = sum(1 for v in summary.values() for t, m in v)
    print()
    print(f"device figures compared: {total}; identical: {exact}; largest |diff|: {worst:.3f}%")


def rq_counts(out, event="block:block_rq_complete"):
    """Per phase, the requests the block layer completed on the phase's loop device in its
    window (perf's block:block_rq_complete, CLOCK_MONOTONIC): the same figures as
    /sys/block/*/stat counts, from the requests themselves. rwbs: an optional leading F
    (a preflush), then the operation W R D F(lush) N, then flags."""
    txt = os.path.join(out, "perf-events.txt")
    if not os.path.exists(txt):
        with open(txt, "w") as f:
            subprocess.run(["perf", "script", "-i", os.path.join(out, "perf.data"), "--ns",
                            "-F", "time,event,trace"], stdout=f, stderr=subprocess.DEVNULL, check=True)
    ev = []
    for line in open(txt):
        p = line.split()
        if len(p) > 1 and p[1].startswith("block:"):
            if p[1].rstrip(":") != event:
                continue
            p = [p[0]] + p[2:]
        if len(p) < 4:
            continue
        t = int(round(float(p[0].rstrip(":")) * 1e9))
        devno, rwbs = p[1], p[2]
        nsec = int(p[p.index("+") + 1]) if "+" in p else 0
        ev.append((t, devno, rwbs, nsec))
    ev.sort()
    res, meta, doc = match(out)
    import bisect
    ts = [e[0] for e in ev]
    out_rows = []
    for tr, ph, a, b, d in res:
        if a is None:
            continue
        devno = open(f"/sys/block/{a['dev']}/dev").read().strip().replace(":", ",")
        c = {k: 0 for k, _, _ in FIELDS}
        c["empty_writes"] = 0
        # The window: from the start reading to the end reading. A reading stamped
        # before and after (t0_ns, t_ns) is placed at its midpoint.
        ta = (a.get("t0_ns", a["t_ns"]) + a["t_ns"]) // 2
        tb = (b.get("t0_ns", b["t_ns"]) + b["t_ns"]) // 2
        for t, dn, rwbs, nsec in ev[bisect.bisect_left(ts, ta):bisect.bisect_right(ts, tb)]:
            if dn != devno:
                continue
            r = rwbs
            if len(r) > 1 and r[0] == "F" and r[1] in "WRDFN":
                r = r[1:]
            op = r[0]
            if op == "F":
                c["dev_flushes"] += 1
            elif op == "W" and nsec == 0:
                # The empty request of a flush (blkdev_issue_flush): its work is the
                # flush request (FF) the flush machinery sends in its place.
                c["empty_writes"] += 1
            elif op in "WN":  # N: write-zeroes, which diskstats counts as writes
                c["dev_write_ios"] += 1
                c["dev_write_bytes"] += nsec * 512
            elif op == "R":
                c["dev_read_ios"] += 1
                c["dev_read_bytes"] += nsec * 512
            elif op == "D":
                c["dev_discards"] += 1
                c["dev_discard_bytes"] += nsec * 512
        out_rows.append((tr, ph, c))
    return out_rows


def table(rows, label):
    """rows: (workload, phase, figure, fsarena, reading) per repetition -> the sums over
    the repetitions, per workload, phase and figure, with how many agreed exactly."""
    agg = {}
    for wl, ph, fig, theirs, mine in rows:
        a = agg.setdefault((wl, ph, fig), [0, 0, 0, 0])
        a[0] += theirs
        a[1] += mine
        a[2] += theirs == mine
        a[3] += 1
    print(f"| workload | phase | figure | fsarena (sum of reps) | {label} | diff % | reps equal |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (wl, ph, fig), (t, m, eq, n) in agg.items():
        print(f"| {wl} | {ph} | {fig} | {t} | {m} | {pct(t, m):+.3f} | {eq}/{n} |")


def summary(outs):
    rows = []
    for out in outs:
        res, _, _ = match(out)
        for tr, ph, a, b, d in res:
            for name, idx, mul in FIELDS:
                rows.append((tr["workload"], ph["name"], name, ph[name],
                             (b["stat"][idx] - a["stat"][idx]) * mul))
    table(rows, "by hand (stat)")


def summary_rq(outs):
    rows, empty = [], {}
    for out in outs:
        for tr, ph, c in rq_counts(out):
            for name, _, _ in FIELDS:
                rows.append((tr["workload"], ph["name"], name, ph[name], c[name]))
            empty[(tr["workload"], ph["name"])] = empty.get((tr["workload"], ph["name"]), 0) + c["empty_writes"]
    table(rows, "requests traced")
    print("\nempty write requests traced (flush carriers, not data; diskstats counts most of them"
          " as nothing):", ", ".join(f"{w} {p} {n}" for (w, p), n in empty.items() if n))


def outside(outs):
    """Per trial: the device work of the whole trial window (from its image's attachment
    to the last opening) against the sum of its phases: what no phase is charged with
    (mkfs, mount, the cold policy's sync and remount between phases, umount)."""
    print("| workload | rep | figure | whole trial (attach .. last reading) | sum of phases | outside phases |")
    print("|---|---|---|---:|---:|---:|")
    for out in outs:
        rows, meta, doc = load(out)
        rows.sort(key=lambda r: r["t_ns"])
        res, _, _ = match(out)
        first = {}
        for r in rows:
            if r.get("why") == "attached":
                first.setdefault(r["t_ns"], r)
        att = sorted(first.values(), key=lambda r: r["t_ns"])
        by_trial = {}
        for tr, ph, a, b, d in res:
            by_trial.setdefault(id(tr), (tr, []))[1].append((ph, a, b))
        for k, (tr, phs) in enumerate(by_trial.values()):
            a0 = att[k]
            last = max((b for _, _, b in phs), key=lambda r: r["t_ns"])
            for name, idx, mul in FIELDS:
                if name.startswith("dev_discard"):
                    continue
                whole = (last["stat"][idx] - a0["stat"][idx]) * mul
                inside = sum(ph[name] for ph, _, _ in phs)
                print(f"| {tr['workload']} | {tr['rep']} | {name} | {whole} | {inside} | {whole - inside} |")


def perop(out, csv_path):
    """fsarena's per-operation figures (CSV export) against this script's counts divided
    by the phase's operations (or MB of payload, for a phase whose headline is MB/s)."""
    import csv
    res, _, _ = match(out)
    got = {}
    for r in csv.DictReader(open(csv_path)):
        got[(r["workload"], r["rep"], r["phase"], r["metric"])] = float(r["value"])
    figs = {"dev_kib_written_per_op": (6, 512 / 1024), "dev_writes_per_op": (4, 1),
            "dev_flushes_per_op": (15, 1), "dev_reads_per_op": (0, 1),
            "dev_kib_read_per_op": (2, 512 / 1024)}
    worst, n = 0.0, 0
    for tr, ph, a, b, d in res:
        den = ph["bytes"] / 1e6 if ph["primary"] == "mb_per_s" else ph["ops"]
        for fig, (idx, mul) in figs.items():
            key = (tr["workload"], str(tr["rep"]), ph["name"], fig)
            if key not in got:
                continue
            mine = (b["stat"][idx] - a["stat"][idx]) * mul / den
            n += 1
            if got[key] != mine:
                worst = max(worst, abs(pct(got[key], mine)))
    print(f"per-operation figures compared: {n}; largest |diff|: {worst:.2e}%")


def compare_rq(outs):
    print("| workload | rep | phase | figure | fsarena | requests traced | diff % |")
    print("|---|---|---|---|---:|---:|---:|")
    n = same = 0
    worst = 0.0
    for out in outs:
        for tr, ph, c in rq_counts(out):
            for name, _, _ in FIELDS:
                theirs, mine = ph.get(name), c[name]
                dp = pct(theirs, mine)
                n += 1
                same += theirs == mine
                if theirs != mine:
                    worst = max(worst, abs(dp))
                print(f"| {tr['workload']} | {tr['rep']} | {ph['name']} | {name} | {theirs} | {mine} | {dp:+.2f} |")
    print(f"\nfigures compared: {n}; identical: {same}; largest |diff|: {worst:.3f}%")


def fsyncs(out, strace_log):
    """fsync-family calls from an `strace -f -ttt` log, charged to phases by time.

    strace's -ttt stamps are CLOCK_REALTIME; the readings are CLOCK_MONOTONIC. The offset
    is taken from command.json's paired stamps (t0 realtime, t0 monotonic)."""
    res, meta, doc = match(out)
    off = meta["t0_real_ns"] - meta["t0_ns"] if "t0_real_ns" in meta else None
    calls = []
    for line in open(strace_log):
        p = line.split(None, 2)
        if len(p) < 3:
            continue
        try:
            t = float(p[1])
        except ValueError:
            continue
        rest = p[2]
        for sc in ("fsync(", "fdatasync(", "syncfs(", "sync_file_range(", "sync("):
            if rest.startswith(sc) or rest.startswith("<... " + sc[:-1]):
                if "resumed>" in rest:
                    break
                calls.append((t, sc[:-1]))
                break
    print("| workload | rep | phase | fsync ops (lat_by_op) | strace fsync | fdatasync | syncfs | sync_file_range | dev_flushes |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for tr, ph, a, b, d in res:
        if a is None:
            continue
        ta = (a["t_ns"] + off) / 1e9
        tb = (b["t_ns"] + off) / 1e9
        c = {}
        for t, sc in calls:
            if ta <= t <= tb:
                c[sc] = c.get(sc, 0) + 1
        lat = {o["op"]: o for o in ph.get("lat_by_op", [])}
        f = lat.get("fsync", {})
        fs = f.get("samples") or f.get("count") or 0
        print(f"| {tr.get('workload')} | {tr.get('rep', '?')} | {ph['name']} | {fs} | {c.get('fsync', 0)} | "
              f"{c.get('fdatasync', 0)} | {c.get('syncfs', 0)} | {c.get('sync_file_range', 0)} | {ph.get('dev_flushes')} |")
    inside = sum(1 for t, _ in calls)
    print(f"\nfsync-family calls in the whole log: {inside}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "record" and "--" in sys.argv:
        k = sys.argv.index("--")
        sys.exit(record(sys.argv[2], sys.argv[k + 1:]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "compare":
        compare(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "summary-requests":
        summary_rq(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "outside":
        outside(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "perop":
        perop(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "requests":
        compare_rq(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "fsyncs":
        fsyncs(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)

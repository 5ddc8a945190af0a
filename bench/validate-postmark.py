#!/usr/bin/env python3
"""fsarena's postmark against the real postmark (Debian package `postmark`, 1.51 code).

1. Same work: both run under strace on the same parameters; the sequences of file
   creations, appends, reads and deletions (name, and bytes written per open) must be equal.
2. Same speed: for each configuration, on a fresh filesystem each time (tmpfs, or an ext4
   loop image made as fsarena makes it), the wall time of the postmark process against
   fsarena's total (create + transactions + delete) with --sync none --cache keep (postmark
   never syncs nor drops caches); fsarena's default (synced) figure alongside.

usage (root): bench/validate-postmark.py [REPS | trace]      output: Markdown tables on stdout
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TRACE_ONLY = sys.argv[1:] == ["trace"]
REPS = int(sys.argv[1]) if len(sys.argv) > 1 and not TRACE_ONLY else 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FSARENA = os.path.join(ROOT, "target/release/fsarena")
CONFIGS = [
    ("defaults", {}),
    ("number 5000, transactions 5000", {"number": 5000, "transactions": 5000}),
    ("read/write 4096, 10000 tx, size 500-500000, number 5000",
     {"read": 4096, "write": 4096, "transactions": 10000, "size": (500, 500000), "number": 5000}),
]
WORK = tempfile.mkdtemp(prefix="fsarena-pm-", dir="/var/tmp")


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def pm_config(loc, p):
    lines = [f"set location {loc}"]
    if "size" in p:
        lines.append(f"set size {p['size'][0]} {p['size'][1]}")
    for k in ("number", "transactions", "read", "write"):
        if k in p:
            lines.append(f"set {k} {p[k]}")
    return "\n".join(lines + ["run", "quit", ""])


def fa_spec(p):
    keys = {"number": "number", "transactions": "transactions", "read": "read_block",
            "write": "write_block"}
    parts = [f"{keys[k]}={v}" for k, v in p.items() if k in keys]
    if "size" in p:
        parts += [f"size_low={p['size'][0]}", f"size_high={p['size'][1]}"]
    return "postmark:" + ",".join(parts) if parts else "postmark"


class Fs:
    """A fresh filesystem mounted at a temporary directory."""

    def __init__(self, kind, size):
        self.kind, self.mnt, self.dev = kind, tempfile.mkdtemp(dir=WORK), None
        if kind == "tmpfs":
            sh("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", self.mnt)
        else:
            self.img = os.path.join(WORK, "pm.img")
            sh("fallocate", "-l", size, self.img)
            self.dev = sh("losetup", "--direct-io=on", "-f", "--show", self.img).strip()
            sh("mkfs.ext4", "-F", "-q", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
               self.dev)
            sh("mount", self.dev, self.mnt)

    def close(self):
        sh("umount", self.mnt)
        if self.dev:
            sh("losetup", "-d", self.dev)
            os.remove(self.img)
        os.rmdir(self.mnt)


def postmark_wall(loc, p):
    cfg = os.path.join(WORK, "pm.cfg")
    with open(cfg, "w") as f:
        f.write(pm_config(loc, p))
    t0 = time.perf_counter()
    proc = subprocess.Popen(["postmark", cfg], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert status == 0, out
    m = re.search(r"(\d+) seconds of transactions \((\d+) per second\)", out)
    return wall, int(m[1]), int(m[2]), usage.ru_utime + usage.ru_stime


def fsarena_run(fs, size, p, extra):
    js = os.path.join(WORK, "fa.json")
    sh(FSARENA, "run", fa_spec(p), "--fs", fs, "--size", size, "--reps", "1", "--quiet",
       "--image-dir", os.path.join(WORK, "img"), "--json", js, *extra)
    t = json.load(open(js))["trials"][0]
    ph = {x["name"]: x for x in t["phases"]}
    cpu = sum(x["cpu_user_s"] + x["cpu_sys_s"] for x in t["phases"])
    return ph["delete"]["extra"]["total_s"], ph["transactions"]["ops_per_s"], cpu


def trace_events(cmd, root):
    """(name, op, bytes) for every open/unlink below `root` in an strace of `cmd`."""
    log = os.path.join(WORK, "trace.txt")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,unlink,unlinkat,write,close",
                    "-o", log] + cmd, check=True, capture_output=True)
    # Postmark opens and unlinks by whole path; fsarena by name in a directory it opened
    # (openat/unlinkat on that descriptor): paths below `root` open, by descriptor.
    events, fds, paths = [], {}, {}
    def path_of(dirfd, name):
        return name if dirfd == "AT_FDCWD" else os.path.join(paths.get(dirfd, "?"), name)
    for line in open(log):
        m = re.search(r'openat\((AT_FDCWD|\d+), "([^"]+)", ([A-Z_|]+).*\)\s+=\s+(\d+)', line)
        if m:
            path = path_of(m[1], m[2])
            if path.startswith(root):
                paths[m[4]] = path
            if path.startswith(root) and "/.fsarena" not in path:
                kind = ("append" if "O_APPEND" in m[3]
                        else "read" if m[3].startswith("O_RDONLY") else "create")
                ev = [os.path.relpath(path, root).split("/")[-1], kind, 0]
                events.append(ev)
                fds[m[4]] = ev
            continue
        m = re.search(r"write\((\d+), .*\)\s+=\s+(\d+)", line)
        if m and m[1] in fds:
            fds[m[1]][2] += int(m[2])
            continue
        m = re.search(r"close\((\d+)\)", line)
        if m:
            fds.pop(m[1], None)
            paths.pop(m[1], None)
            continue
        m = re.search(r'unlink(?:at\((AT_FDCWD|\d+), |\()"([^"]+)"', line)
        if m:
            path = path_of(m[1] or "AT_FDCWD", m[2])
            if path.startswith(root) and "/.fsarena" not in path:
                events.append([os.path.relpath(path, root).split("/")[-1], "delete", 0])
    # Only postmark's files (numbered), not the directories fsarena opens around them.
    return [tuple(e) for e in events if e[0].isdigit()]


def same_work():
    p = {"number": 200, "transactions": 2000}
    d = tempfile.mkdtemp(dir=WORK)
    cfg = os.path.join(WORK, "pm.cfg")
    with open(cfg, "w") as f:
        f.write(pm_config(d, p))
    pm = trace_events(["postmark", cfg], d)
    d2 = tempfile.mkdtemp(dir=WORK)
    fa = trace_events([FSARENA, "run", fa_spec(p), "--dir", d2, "--reps", "1", "--quiet",
                       "--sync", "none", "--cache", "keep"], d2)
    print(f"## Same work (number 200, transactions 2000, seed 42)\n")
    print(f"postmark: {len(pm)} file events; fsarena: {len(fa)}; identical: {pm == fa}")
    if pm != fa:
        for i, (a, b) in enumerate(zip(pm, fa)):
            if a != b:
                print(f"first difference at event {i}: postmark {a}, fsarena {b}")
                break
        else:
            n = min(len(pm), len(fa))
            print(f"equal for {n} events; then postmark {pm[n:][:3]}, fsarena {fa[n:][:3]}")
    kinds = {}
    for _, k, _ in pm:
        kinds[k] = kinds.get(k, 0) + 1
    print(f"postmark's events by kind: {kinds}\n")


def main():
    sh("cargo", "build", "--release", "-q", cwd=ROOT)
    same_work()
    if TRACE_ONLY:
        return
    print("## Speed (median of %d runs, fresh filesystem each)\n" % REPS)
    print("| fs | configuration | postmark wall s | its printed tx/s | postmark CPU s "
          "| fsarena total s (--sync none) | ratio | fsarena tx/s | fsarena CPU s "
          "| fsarena total s (default sync) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fs, size in (("tmpfs", "4G"), ("ext4", "4G")):
        for name, p in CONFIGS:
            pm, fa, fa_sync = [], [], []
            for _ in range(REPS):
                f = Fs(fs, size)
                try:
                    pm.append(postmark_wall(f.mnt, p))
                finally:
                    f.close()
                fa.append(fsarena_run(fs, size + "iB", p, ["--sync", "none", "--cache", "keep"]))
                fa_sync.append(fsarena_run(fs, size + "iB", p, []))
            pw = statistics.median(x[0] for x in pm)
            ptps = statistics.median(x[2] for x in pm)
            fw = statistics.median(x[0] for x in fa)
            ftps = statistics.median(x[1] for x in fa)
            fs_w = statistics.median(x[0] for x in fa_sync)
            pcpu = statistics.median(x[3] for x in pm)
            fcpu = statistics.median(x[2] for x in fa)
            print(f"| {fs} | {name} | {pw:.3f} | {ptps} | {pcpu:.3f} | {fw:.3f} | {fw / pw:.2f} "
                  f"| {ftps:.0f} | {fcpu:.3f} | {fs_w:.3f} |")


if __name__ == "__main__":
    try:
        main()
    finally:
        subprocess.run(["rm", "-rf", WORK])

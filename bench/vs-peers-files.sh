#!/usr/bin/env bash
# Overhead of fsarena against the tools it replaces (issue 7, part 3; the job/fio cases are
# in bench/vs-peers.sh): each case runs
# fsarena and the peer side by side on the same tmpfs, alternating A B A B (PAIRS pairs,
# the order swapped every other pair), and prints the median of the per-pair ratios
# fsarena/peer (a rate ratio: ≥ 1.0 means fsarena is at least as fast). Root; installs the
# peers with apt when missing. Raw outputs go to $OUT (default /tmp/fsarena-vs-peers).
#
# One function per case (case_NAME); CASES picks them. Cases:
#  * smallfiles: create of SF_FILES empty files, 100 per directory, vs `fs_mark -S 0` with
#    the same files per directory (-D files/100 -N 100) — files/s. fsarena's figure is its
#    `files_per_s` note of the create phase (files / phase time), fs_mark's its Files/sec.
#  * postmark: `number 5000, transactions 50000` vs postmark (Debian package, 1.5x code) —
#    transactions/s as each tool reports it (postmark's clock is time(): 1-second
#    resolution, so its rate is coarse), and the whole-process wall time of both, which is
#    the like-for-like figure (ratio postmark wall / fsarena wall, also ≥ 1.0 is better).
#
# CPU time: on a machine shared with other work, wall-clock rates count the time the other
# work had the CPUs. Each case also prints operations per CPU-second (user + system):
# smallfiles — fsarena's create phase (its rusage) against the whole fs_mark process;
# postmark — both whole processes. Each case starts and ends with the load average and
# the CPU pressure (/proc/pressure/cpu, share of time runnable tasks waited for a CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fsarena-vs-peers}
PAIRS=${PAIRS:-5}
CASES=${CASES:-"smallfiles postmark"}
SF_FILES=${SF_FILES:-200000}
PM_NUMBER=${PM_NUMBER:-5000}
PM_TRANSACTIONS=${PM_TRANSACTIONS:-50000}

[ "$(id -u)" = 0 ] || { echo "vs-peers-files.sh: needs root (mounts tmpfs, installs peers)" >&2; exit 1; }
need() { # program, Debian package
  command -v "$1" > /dev/null && return
  echo "installing $2 (for $1)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" > /dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" > /dev/null; }
}
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${FSARENA:-}" ]; then cargo build --release -q; fi
BIN=${FSARENA:-$TARGET/release/fsarena}   # FSARENA=path: a binary already built
WORK=$(mktemp -d /var/tmp/vsp-XXXXXX)   # short: fs_mark wants a -d path under 40 bytes
MNT=$WORK/m
mkdir -p "$OUT" "$MNT"
cleanup() {
  if mountpoint -q "$MNT"; then umount "$MNT"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
mount -t tmpfs -o size=2G,nr_inodes=2000000 tmpfs "$MNT"

fsarena() { # json, workload: one trial in a fresh subdirectory of the tmpfs, nothing synced
  "$BIN" --db "$WORK/fsarena.db" run "$2" --dir "$MNT" --reps 1 --sync none --cache keep \
    --data zeros --image-dir "$WORK/images" --quiet --json "$1" > /dev/null
}
timed() { # file, command...: runs it, writes "wall_s user_s sys_s" of the process to file
  local f=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$f" "$@"
}
loadinfo() { # the load average and the CPU pressure, one line on stderr and in the table
  local l p
  l=$(cut -d' ' -f1-3 /proc/loadavg)
  p=$(awk '/^some/ { sub("avg10=", "", $2); sub("avg60=", "", $3); print $2 "/" $3 }' /proc/pressure/cpu 2>/dev/null || echo "?")
  echo "| ($1 $(date -u +%H:%M:%S): load $l, cpu pressure avg10/avg60 $p %) | | | |"
}
order() { # pair: "fsarena peer", or swapped on even pairs
  if (( $1 % 2 )); then echo "fsarena peer"; else echo "peer fsarena"; fi
}

case_smallfiles() {
  need fs_mark fsmark
  local dirs=$((SF_FILES / 100)) pair who
  echo "$SF_FILES" > "$OUT/files"
  for pair in $(seq "$PAIRS"); do
    for who in $(order "$pair"); do
      echo "smallfiles, pair $pair: $who" >&2
      if [ "$who" = peer ]; then
        # -p 10 -r 8: 10-byte names, close to fsarena's f<index>; -k keeps the files (the
        # cleanup is not timed), -L 1 one loop. Run from $WORK: fs_mark appends to
        # ./fs_log.txt.
        (cd "$WORK" && timed "$OUT/smallfiles-fsmark-$pair.time" fs_mark -d "$MNT/fsm" -n "$SF_FILES" -s 0 -S 0 -D "$dirs" -N 100 -p 10 -r 8 -k -L 1) \
          > "$OUT/smallfiles-fsmark-$pair.txt" 2>&1 ||
          { cat "$OUT/smallfiles-fsmark-$pair.txt" >&2; exit 1; }
        rm -rf "$MNT/fsm"
      else
        # per_dir 100 and a fanout of files/100: every directory a child of the root, as
        # fs_mark's -D directories are.
        fsarena "$OUT/smallfiles-fsarena-$pair.json" \
          "smallfiles:files=$SF_FILES,per_dir=100,fanout=$dirs"
      fi
    done
  done
  python3 - "$OUT" "$PAIRS" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def fsmark(path):
    lines = open(path).read().splitlines()
    for i, l in enumerate(lines):
        if l.strip().startswith("FSUse%"):
            return float(lines[i + 1].split()[3])
    raise SystemExit(f"no result line in {path}")
def fsarena(path):
    t = json.load(open(path))["trials"][0]
    assert t["status"] == "ok", t.get("error")
    p = next(p for p in t["phases"] if p["name"] == "create")
    return p["extra"]["files_per_s"], p["ops"] / (p["cpu_user_s"] + p["cpu_sys_s"])
def fsmark_cpu(i):
    _, user, sys_ = map(float, open(f"{out}/smallfiles-fsmark-{i}.time").read().split()[-3:])
    files = int(open(f"{out}/files").read())
    return files / (user + sys_)
a = [fsarena(f"{out}/smallfiles-fsarena-{i}.json") for i in range(1, pairs + 1)]
b = [fsmark(f"{out}/smallfiles-fsmark-{i}.txt") for i in range(1, pairs + 1)]
bc = [fsmark_cpu(i) for i in range(1, pairs + 1)]
r = [x[0] / y for x, y in zip(a, b)]
rc = [x[1] / y for x, y in zip(a, bc)]
f = lambda xs: "%.0f (%.0f–%.0f)" % (statistics.median(xs), min(xs), max(xs))
print("| smallfiles create, empty files, files/s | %s | fs_mark -S 0: %s | %.2f (%.2f–%.2f) |"
      % (f([x[0] for x in a]), f(b), statistics.median(r), min(r), max(r)))
print("| smallfiles create, files per CPU-second | %s | fs_mark (whole process): %s | %.2f (%.2f–%.2f) |"
      % (f([x[1] for x in a]), f(bc), statistics.median(rc), min(rc), max(rc)))
PY
}

case_postmark() {
  need postmark postmark
  local pair who cfg=$WORK/pm.cfg
  printf 'set location %s\nset number %s\nset transactions %s\nrun\nquit\n' \
    "$MNT/pm" "$PM_NUMBER" "$PM_TRANSACTIONS" > "$cfg"
  for pair in $(seq "$PAIRS"); do
    for who in $(order "$pair"); do
      echo "postmark, pair $pair: $who" >&2
      if [ "$who" = peer ]; then
        mkdir -p "$MNT/pm"
        timed "$OUT/postmark-peer-$pair.time" postmark "$cfg" > "$OUT/postmark-peer-$pair.txt"
        rm -rf "$MNT/pm"
      else
        timed "$OUT/postmark-fsarena-$pair.time" "$BIN" --db "$WORK/fsarena.db" run \
          "postmark:number=$PM_NUMBER,transactions=$PM_TRANSACTIONS" --dir "$MNT" --reps 1 \
          --sync none --cache keep --data zeros --image-dir "$WORK/images" --quiet \
          --json "$OUT/postmark-fsarena-$pair.json" > /dev/null
      fi
    done
  done
  python3 - "$OUT" "$PAIRS" <<'PY'
import json, re, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def peer(i):
    text = open(f"{out}/postmark-peer-{i}.txt").read()
    tx_s = int(re.search(r"seconds of transactions \((\d+) per second\)", text)[1])
    return (tx_s, *times(f"{out}/postmark-peer-{i}.time"))
def times(path): # wall, user + system CPU of the whole process
    wall, user, sys_ = map(float, open(path).read().split()[-3:])
    return wall, user + sys_
def fsarena(i):
    t = json.load(open(f"{out}/postmark-fsarena-{i}.json"))["trials"][0]
    assert t["status"] == "ok", t.get("error")
    tx = next(p for p in t["phases"] if p["name"] == "transactions")["ops_per_s"]
    return (tx, *times(f"{out}/postmark-fsarena-{i}.time"))
a = [fsarena(i) for i in range(1, pairs + 1)]
b = [peer(i) for i in range(1, pairs + 1)]
f = lambda xs, p="%.0f": (p + " (" + p + "–" + p + ")") % (statistics.median(xs), min(xs), max(xs))
r = [x[0] / y[0] for x, y in zip(a, b)]
w = [y[1] / x[1] for x, y in zip(a, b)]
print("| postmark tx/s as each prints it (postmark: 1-s clock) | %s | postmark: %s | %.2f (%.2f–%.2f) |"
      % (f([x[0] for x in a]), f([y[0] for y in b]), statistics.median(r), min(r), max(r)))
print("| postmark whole process wall s (ratio peer/fsarena) | %s | postmark: %s | %.2f (%.2f–%.2f) |"
      % (f([x[1] for x in a], "%.2f"), f([y[1] for y in b], "%.2f"), statistics.median(w), min(w), max(w)))
c = [y[2] / x[2] for x, y in zip(a, b)]
print("| postmark whole process CPU s, user + sys (ratio peer/fsarena) | %s | postmark: %s | %.2f (%.2f–%.2f) |"
      % (f([x[2] for x in a], "%.2f"), f([y[2] for y in b], "%.2f"), statistics.median(c), min(c), max(c)))
PY
}

echo "| case | fsarena median (min–max) | peer median (min–max) | median ratio (min–max) |"
echo "|---|---|---|---|"
for c in $CASES; do
  loadinfo "before $c"
  "case_$c"
  loadinfo "after $c"
done

#!/usr/bin/env bash
# Scale check (issue 7, part 4): fsarena's own memory must not grow with the number of
# files it works on. Runs, on tmpfs, smallfiles with SF_FILES empty files (create, stat,
# delete) and bonnie-files with files=BF_UNITS (× 1024: the default 1024 is a million
# files, six phases) and job with nrfiles=JOB_FILES (default 100,000) of which at most
# openfiles=JOB_OPENFILES (default 1,000) are open at once, REPS trials each, and prints
# every trial's peak RSS from the JSON
# output (`peak_rss_bytes`: VmHWM of /proc/self/status, reset at trial start through
# /proc/self/clear_refs) against LIMIT_MIB. Exits 1 when a trial failed or went over.
# Root. Raw outputs go to $OUT (default /tmp/fsarena-scale).
#
# Memory: a tmpfs inode and its dentry cost the kernel ~1 KiB of unswappable RAM each
# (measured: see docs/performance.md), so SF_FILES=5000000 needs ~5 GiB free; the script
# refuses to start when MemAvailable is under twice the estimate. tmpfs's default inode
# limit (half the RAM pages) is lifted with nr_inodes.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fsarena-scale}
REPS=${REPS:-1}
SF_FILES=${SF_FILES:-5000000}
BF_UNITS=${BF_UNITS:-1024}
LIMIT_MIB=${LIMIT_MIB:-64}
# The job opens its files on demand, JOB_OPENFILES at a time (the hard limit of open files
# may be far below JOB_FILES: 20,000 in the container of docs/performance.md).
JOB_FILES=${JOB_FILES:-100000}
JOB_OPENFILES=${JOB_OPENFILES:-1000}
PARTS=${PARTS:-"smallfiles bonnie-files job"}
KIB_PER_INODE=${KIB_PER_INODE:-1.2}   # kernel memory per empty tmpfs file, measured

[ "$(id -u)" = 0 ] || { echo "scale.sh: needs root (it mounts tmpfs)" >&2; exit 1; }
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
if [ -z "${FSARENA:-}" ]; then cargo build --release -q; fi
BIN=${FSARENA:-$TARGET/release/fsarena}   # FSARENA=path: a binary already built
WORK=$(mktemp -d /var/tmp/fsarena-scale-XXXXXX)
mkdir -p "$OUT"
cleanup() {
  "$BIN" cleanup --image-dir "$WORK/images" > /dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
check_memory() { # files
  local need_kib
  need_kib=$(awk -v n="$1" -v k="$KIB_PER_INODE" 'BEGIN { printf "%d", n * k }')
  if [ $((need_kib * 2)) -gt "$avail_kib" ]; then
    echo "scale.sh: $1 files need ~$((need_kib / 1024)) MiB of kernel memory on tmpfs;" \
      "only $((avail_kib / 1024)) MiB available (want twice that): lower the count" >&2
    exit 1
  fi
}

run() { # name, files, workload: one trial per repetition, JSON in $OUT/scale-NAME.json
  local name=$1 files=$2 spec=$3
  check_memory "$files"
  echo "$name: $spec on tmpfs, $REPS trial(s)" >&2
  # --sync none: tmpfs has nothing to write back; --cache keep: there is no cache to drop.
  /usr/bin/time -f "$name: whole process %e s, max RSS %M KiB" \
    "$BIN" --db "$WORK/fsarena.db" run "$spec" --fs tmpfs --size 1GiB \
    --mount-opt "tmpfs=nr_inodes=$((files + files / 10 + 100000))" \
    --reps "$REPS" --sync none --cache keep --image-dir "$WORK/images" --quiet \
    --json "$OUT/scale-$name.json" > /dev/null
}

if [[ " $PARTS " == *" smallfiles "* ]]; then
  run smallfiles "$SF_FILES" "smallfiles:files=$SF_FILES"
fi
if [[ " $PARTS " == *" bonnie-files "* ]]; then
  run bonnie-files $((BF_UNITS * 1024)) "bonnie-files:files=$BF_UNITS"
fi

if [[ " $PARTS " == *" job "* ]]; then
  # 4 KiB per file, random 4 KiB reads over all of them for 2 s, JOB_OPENFILES open at once.
  run job "$JOB_FILES" "job:engine=psync,rw=randread,nrfiles=$JOB_FILES,openfiles=$JOB_OPENFILES,size=$((JOB_FILES * 4))KiB,runtime=2"
fi
python3 - "$OUT" "$LIMIT_MIB" $PARTS <<'PY'
import json, sys
out, limit, parts = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
bad = 0
print("| workload | trial | files= | status | peak RSS MiB | phases (entries/s) |")
print("|---|---|---|---|---|---|")
for name in parts:
    run = json.load(open(f"{out}/scale-{name}.json"))
    for t in run["trials"]:
        rss = t["peak_rss_bytes"] / 2**20
        phases = ", ".join("%s %.0f" % (p["name"], p["ops_per_s"]) for p in t["phases"])
        files = t["params"].get("files", t["params"].get("nrfiles", "?"))
        print(f"| {name} | {t['rep']} | {files} | {t['status']} | {rss:.1f} | {phases} |")
        if t["status"] != "ok" or rss >= limit:
            bad += 1
print(f"\nlimit {limit:g} MiB: {'all trials under it' if not bad else f'{bad} trial(s) failed or over'}")
sys.exit(1 if bad else 0)
PY

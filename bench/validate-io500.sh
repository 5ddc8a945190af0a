#!/usr/bin/env bash
# Validates the io500 workload's ior-easy, ior-hard and mdtest-easy phases against fio and
# fs_mark doing the same patterns, on fresh 1 GiB ext4 loop images made the way fsarena
# makes its own (preallocated, loop direct-io on, mkfs.ext4 without discard or lazy init).
# IOR and mdtest are not packaged by Debian, so fio and fs_mark stand in for them:
#
#  * ior-easy (2 tasks, file per task, 2 MiB sequential transfers, 128 MiB each, fsync
#    before close) vs fio rw=write / rw=read, bs=2M, size=128M, numjobs=2, end_fsync=1;
#  * ior-hard (2 tasks, one shared file, 2,000 transfers of 47,008 B each, task t's k-th
#    at (2k + t) × 47008) vs fio on one file with offset_increment=47008,
#    zonemode=strided, zonesize=47008, zoneskip=47008 (the same offsets), end_fsync=1;
#  * mdtest-easy-write (2 tasks, 10,000 empty files each in a directory of their own) vs
#    fs_mark -S 0 -s 0 -n 10000 with two directories (two threads).
#
# fsarena runs with verify=false and --sync none, as the peers do (no read check, no sync
# after creating files; the ior phases still fsync before close, as fio's end_fsync=1).
# With IOR_DIR set (an IOR 4 installation: bin/ior, bin/mdtest, built from hpc/ior; Debian
# has no package), IOR and mdtest run the io500's own command lines too, on 2 MPI ranks
# (mpirun --allow-run-as-root -np 2), on a fresh image of their own.
# Reads follow a cache drop and remount, as fsarena's --cache cold does. The tools
# alternate repetition by repetition. Root. Prints one line per tool and phase and
# repetition: tool phase figure unit; then the median and range of each.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
OUT=${OUT:-/tmp/fsarena-validate-io500}
for tool in fs_mark fio; do command -v $tool >/dev/null || { echo "needs $tool" >&2; exit 1; }; done
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/fsarena
WORK=$(mktemp -d /var/tmp/vio-XXXXXX)
mkdir -p "$OUT"
rm -f "$OUT/lines.txt" "$OUT/ior.txt"
SEG=47008
N_HARD=2000
MNT=$WORK/m
DEV=""
cleanup() {
  if mountpoint -q "$MNT"; then umount "$MNT"; fi
  if [ -n "$DEV" ]; then losetup -d "$DEV" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

make_fs() {
  mkdir -p "$MNT"
  fallocate -l 1G "$WORK/img"
  DEV=$(losetup --find --show --direct-io=on "$WORK/img")
  mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$DEV"
  mount -t ext4 "$DEV" "$MNT"
}
drop_fs() {
  umount "$MNT"
  losetup -d "$DEV"; DEV=""; rm -f "$WORK/img"
}
cold() { sync; umount "$MNT"; echo 3 > /proc/sys/vm/drop_caches; mount -t ext4 "$DEV" "$MNT"; }
fio_bw() { # fio JSON on stdin -> GiB/s of the job group (bytes / runtime)
  python3 -c '
import json,sys
j=json.load(sys.stdin)["jobs"][0]
d=j["write"] if j["write"]["io_bytes"] else j["read"]
print("%.4f" % (d["io_bytes"] / (d["runtime"] / 1e3) / 2**30))'
}
fio_hard() { # rw
  fio --name=hard --filename="$MNT/ior-hard/file" --rw="$1" --bs=$SEG --numjobs=2 \
    --offset_increment=$SEG --zonemode=strided --zonesize=$SEG --zoneskip=$SEG \
    --size=$((2 * N_HARD * SEG)) --io_size=$((N_HARD * SEG)) --ioengine=psync \
    --end_fsync=1 --group_reporting --output-format=json
}
fio_easy() { # rw
  fio --name=easy --directory="$MNT/ior-easy" --rw="$1" --bs=2M --size=128M --numjobs=2 \
    --ioengine=psync --end_fsync=1 --group_reporting --output-format=json
}

IOR_DIR=${IOR_DIR:-}
MPI="mpirun --allow-run-as-root -np 2"
ior_mib() { # ior ARGS: the summary's Max(MiB) of the operation, in GiB/s
  $MPI "$IOR_DIR/bin/ior" "$@" | tee -a "$OUT/ior.txt" \
    | awk '($1 == "write" || $1 == "read") && NF > 15 {printf "%.4f", $2 / 1024}'
}
EASY="-C -Q 1 -g -G 271 -k -e -t 2m -b 128m -F"
HARD="-C -Q 1 -g -G 27 -k -e -t $SEG -b $SEG -s $N_HARD"
run_ior() {
  make_fs
  mkdir -p "$MNT/ior-easy" "$MNT/ior-hard"
  cold; say "ior     ior-easy-write     $(ior_mib $EASY -o "$MNT/ior-easy/ior_file_easy" -w) GiB/s"
  cold; $MPI "$IOR_DIR/bin/mdtest" -n 10000 -u -L -F -P -N 1 -d "$MNT/mdtest-easy" -C \
    > "$OUT/mdtest-$rep.txt" 2>&1
  say "mdtest  mdtest-easy-write  $(awk '/File creation/ {print $3; exit}' "$OUT/mdtest-$rep.txt") files/s"
  cold; say "ior     ior-hard-write     $(ior_mib $HARD -o "$MNT/ior-hard/file" -w) GiB/s"
  cold; say "ior     ior-easy-read      $(ior_mib $EASY -o "$MNT/ior-easy/ior_file_easy" -r -R) GiB/s"
  cold; say "ior     ior-hard-read      $(ior_mib $HARD -o "$MNT/ior-hard/file" -r -R) GiB/s"
  drop_fs
}
say() { echo "$*" | tee -a "$OUT/lines.txt"; }
for rep in $(seq 1 "$REPS"); do
  # fsarena: the same amounts, bounded by the limits (the 60 s stonewall is not reached);
  # like the peers: no read check (fio does not verify), no syncfs after the mdtest phases
  # (fs_mark -S 0); the ior phases fsync before close whatever the policy (fio end_fsync=1).
  "$BIN" run "io500:tasks=2,stonewall=60,ior_easy_block=128MiB,ior_hard_segments=$N_HARD,mdtest_easy_files=10000,mdtest_hard_files=3000,verify=false" \
    --sync none --fs ext4 --size 1GiB --reps 1 --quiet --image-dir "$WORK/fsa" --db "$WORK/fsa.db" \
    --json "$OUT/fsarena-$rep.json" >/dev/null
  (python3 - "$OUT/fsarena-$rep.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
for p in t["phases"]:
    if p["name"] in ("ior-easy-write", "ior-easy-read", "ior-hard-write", "ior-hard-read"):
        print("fsarena %-18s %.4f GiB/s" % (p["name"], p["bytes"] / p["wall_s"] / 2**30))
    if p["name"] == "mdtest-easy-write":
        print("fsarena %-18s %.0f files/s" % (p["name"], p["ops"] / p["wall_s"]))
EOF
  ) | tee -a "$OUT/lines.txt"
  make_fs
  mkdir -p "$MNT/ior-easy" "$MNT/ior-hard" "$MNT/e0" "$MNT/e1"
  cold; say "fio     ior-easy-write     $(fio_easy write | tee "$OUT/fio-easy-w-$rep.json" | fio_bw) GiB/s"
  cold; say "fio     ior-hard-write     $(fio_hard write | tee "$OUT/fio-hard-w-$rep.json" | fio_bw) GiB/s"
  cold; fs_mark -d "$MNT/e0" -d "$MNT/e1" -n 10000 -s 0 -S 0 -L 1 -k > "$OUT/fsmark-$rep.txt" 2>&1
  say "fs_mark mdtest-easy-write  $(awk '$1 ~ /^[0-9]+$/ && NF == 5 {print $4}' "$OUT/fsmark-$rep.txt") files/s"
  cold; say "fio     ior-easy-read      $(fio_easy read | tee "$OUT/fio-easy-r-$rep.json" | fio_bw) GiB/s"
  cold; say "fio     ior-hard-read      $(fio_hard read | tee "$OUT/fio-hard-r-$rep.json" | fio_bw) GiB/s"
  drop_fs
  if [ -n "$IOR_DIR" ]; then run_ior; fi
done
python3 - "$OUT/lines.txt" <<'EOF2'
import statistics, sys, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, phase, x, unit = line.split()
    v[(phase, tool, unit)].append(float(x))
for (phase, tool, unit), xs in sorted(v.items()):
    print("%-18s %-8s median %9.4g  range %9.4g-%-9.4g %s (n=%d)"
          % (phase, tool, statistics.median(xs), min(xs), max(xs), unit, len(xs)))
EOF2

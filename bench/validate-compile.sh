#!/usr/bin/env bash
# Side by side: the real compilebench 0.6 and `fsarena run compile` on the same datasets
# (fsarena's synthetic ones, exported with examples/compilebench_datasets.rs), the same
# random operations, on a freshly made filesystem each run.
#
# usage: bench/validate-compile.sh /path/to/compilebench [FS...]   (as root)
#   compilebench is Chris Mason's Python script (not shipped with fsarena).
# env: SCALE (0.1), INITIAL (3), RUNS (30), REPS (3), SIZE (1G), OUT (/var/tmp/fsarena-cb),
#      NOSYNC=1: compilebench -n against fsarena --sync none --cache keep (no syncs, no
#      cache drops: what is left is each tool's own cost per file).
set -euo pipefail
CB=${1:?path to the compilebench script}; shift
FSLIST=${*:-ext4 tmpfs}
SCALE=${SCALE:-0.1} INITIAL=${INITIAL:-3} RUNS=${RUNS:-30} REPS=${REPS:-3} SIZE=${SIZE:-1G}
OUT=${OUT:-/var/tmp/fsarena-cb}
CB_OPTS=() FA_OPTS=()
if [ "${NOSYNC:-0}" = 1 ]; then CB_OPTS=(-n); FA_OPTS=(--sync none --cache keep); fi
cd "$(dirname "$0")/.."
cargo build --release -q --examples --bins
mkdir -p "$OUT"
DS="$OUT/datasets"
./target/release/examples/compilebench_datasets "$SCALE" 42 "$DS"
MNT="$OUT/mnt"; mkdir -p "$MNT"
IMG="$OUT/cb.img"
cleanup() { umount "$MNT" 2>/dev/null || true; [ -n "${DEV:-}" ] && losetup -d "$DEV" 2>/dev/null || true; rm -f "$IMG"; }
trap cleanup EXIT

make_fs() { # fresh filesystem, made as fsarena makes it
  cleanup; DEV=
  case $1 in
    tmpfs) mount -t tmpfs -o size=$SIZE tmpfs "$MNT" ;;
    *) fallocate -l $SIZE "$IMG"; DEV=$(losetup --direct-io=on -f --show "$IMG")
       case $1 in
         ext4) mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$DEV" ;;
         xfs) mkfs.xfs -f -q -K "$DEV" ;;
         btrfs) mkfs.btrfs -f -q -K "$DEV" ;;
       esac
       mount "$DEV" "$MNT" ;;
  esac
}

for fs in $FSLIST; do
  for rep in $(seq 1 "$REPS"); do
    make_fs "$fs"
    python3 "$CB" -D "$MNT/cb" -s "$DS" -i "$INITIAL" -r "$RUNS" "${CB_OPTS[@]}" > "$OUT/cb-$fs-$rep.txt" 2> "$OUT/cb-$fs-$rep.log" \
      || echo "compilebench failed on $fs (rep $rep): see $OUT/cb-$fs-$rep.log" >&2
    cleanup
  done
  ./target/release/fsarena run "compile:scale=$SCALE,initial_dirs=$INITIAL,runs=$RUNS" \
    --fs "$fs" --size "$SIZE"iB --reps "$REPS" "${FA_OPTS[@]}" --quiet --image-dir "$OUT/fsarena" \
    --json "$OUT/fsarena-$fs.json" > "$OUT/fsarena-$fs.txt"
done
python3 bench/validate-compile.py "$OUT" $FSLIST

#!/usr/bin/env bash
# Side by side: GNU tar and `fsarena run untar` extracting the same archive (a web-cache
# corpus written by examples/corpus_tar.rs, kept in /dev/shm so both read it from memory),
# then `rm -r` against the delete phase, on a freshly made filesystem each time.
#
# usage (root): bench/validate-untar.sh [FS...]     env: SCALE (0.1), REPS (3), SIZE (2G)
set -euo pipefail
FSLIST=${*:-ext4 tmpfs}
SCALE=${SCALE:-0.1} REPS=${REPS:-3} SIZE=${SIZE:-2G}
cd "$(dirname "$0")/.."
cargo build --release -q --examples --bins
WORK=$(mktemp -d /var/tmp/fsarena-untar-XXXXXX)
TAR=/dev/shm/fsarena-validate-untar.tar
MNT=$WORK/mnt; mkdir -p "$MNT"
cleanup() { umount "$MNT" 2>/dev/null || true; [ -n "${DEV:-}" ] && losetup -d "$DEV" 2>/dev/null || true; rm -rf "$WORK" "$TAR"; }
trap cleanup EXIT
./target/release/examples/corpus_tar web-cache "$SCALE" 42 random > "$TAR"
echo "archive: $(stat -c %s "$TAR") bytes, $(tar tf "$TAR" | wc -l) entries"

make_fs() {
  umount "$MNT" 2>/dev/null || true; [ -n "${DEV:-}" ] && losetup -d "$DEV"; DEV=
  case $1 in
    tmpfs) mount -t tmpfs -o size=$SIZE tmpfs "$MNT" ;;
    ext4) rm -f "$WORK/img"; fallocate -l $SIZE "$WORK/img"
          DEV=$(losetup --direct-io=on -f --show "$WORK/img")
          mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$DEV"
          mount "$DEV" "$MNT" ;;
  esac
}
now() { date +%s.%N; }

printf '| fs | tool | sync | extract s | rm -r / delete s |\n|---|---|---|---|---|\n'
for fs in $FSLIST; do
  for sync in none end; do
    for rep in $(seq 1 "$REPS"); do
      make_fs "$fs"; mkdir "$MNT/x"
      sync; echo 3 > /proc/sys/vm/drop_caches; cat "$TAR" > /dev/null
      t0=$(now); tar xf "$TAR" -C "$MNT/x"; [ $sync = end ] && sync -f "$MNT"; t1=$(now)
      [ $sync = end ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
      t2=$(now); rm -r "$MNT/x"; [ $sync = end ] && sync -f "$MNT"; t3=$(now)
      echo "| $fs | GNU tar | $sync | $(echo "$t1 - $t0" | bc) | $(echo "$t3 - $t2" | bc) |"
    done
    cache=keep; [ $sync = end ] && cache=cold
    ./target/release/fsarena run "untar:archive=$TAR" --fs "$fs" --size "${SIZE}iB" \
      --reps "$REPS" --sync $sync --cache $cache --quiet --image-dir "$WORK/fa" \
      --json "$WORK/fa.json" > /dev/null
    python3 - "$WORK/fa.json" "$fs" "$sync" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for t in r["trials"]:
    ph = {p["name"]: p for p in t["phases"]}
    print(f"| {sys.argv[2]} | fsarena | {sys.argv[3]} | {ph['extract']['wall_s']:.3f} | {ph['delete']['wall_s']:.3f} |")
PY
  done
done

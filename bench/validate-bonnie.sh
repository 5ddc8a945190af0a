#!/usr/bin/env bash
# Runs bonnie++ 2.00a and fsarena side by side with the same parameters on the same kinds of
# filesystem (loop images made the way fsarena makes them, and tmpfs), alternating the tools
# per filesystem. Root. Writes raw CSV/JSON to $OUT (default /tmp/fsarena-validate) and
# prints a summary (bench/validate-bonnie.py). Used for docs/validation.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fsarena-validate}
FSLIST=${FSLIST:-"ext4 xfs btrfs tmpfs"}
REPS=${REPS:-3}
SIZE_MIB=${SIZE_MIB:-512}
CHAR_MIB=${CHAR_MIB:-4}
FILES=${FILES:-128}
command -v bonnie++ >/dev/null || apt-get install -y -qq -o DPkg::Lock::Timeout=600 bonnie++
cargo build --release -q
BIN=$PWD/target/release/fsarena
WORK=$(mktemp -d /var/tmp/fsarena-validate-XXXXXX)
mkdir -p "$OUT"
MNT=$WORK/mnt
DEV=""
cleanup() {
  if mountpoint -q "$MNT"; then umount "$MNT"; fi
  if [ -n "$DEV" ]; then losetup -d "$DEV" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

make_fs() { # like fsarena: preallocated image, direct-io loop, no discard, no lazy init
  mkdir -p "$MNT"
  if [ "$1" = tmpfs ]; then mount -t tmpfs -o size=2G tmpfs "$MNT"; return; fi
  fallocate -l 4G "$WORK/img"
  DEV=$(losetup --find --show --direct-io=on "$WORK/img")
  case $1 in
    ext4) mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$DEV" ;;
    xfs) mkfs.xfs -f -K "$DEV" >/dev/null ;;
    btrfs) mkfs.btrfs -f -q -K "$DEV" >/dev/null 2>&1 ;;
  esac
  mount -t "$1" "$DEV" "$MNT"
}
drop_fs() {
  umount "$MNT"
  if [ -n "$DEV" ]; then losetup -d "$DEV"; DEV=""; rm -f "$WORK/img"; fi
}

W="bonnie:size=${SIZE_MIB}MiB,chunk=8KiB,seeks=8192,seekers=5,char_mode=syscall,char_size=${CHAR_MIB}MiB"
F="bonnie-files:files=$FILES"
for fs in $FSLIST; do
  for rep in $(seq "$REPS"); do
    make_fs "$fs"
    echo "bonnie++ on $fs, rep $rep" >&2
    bonnie++ -d "$MNT" -s "$SIZE_MIB" -r $((SIZE_MIB / 2)) -f"$CHAR_MIB" -n "$FILES" -u root -q -m "$fs" \
      2>/dev/null | tail -n 1 >> "$OUT/bonnie++-$fs.csv"
    drop_fs
    echo "fsarena like-for-like on $fs, rep $rep" >&2
    if [ "$fs" = tmpfs ]; then T=(--fs tmpfs --size 2GiB); else T=(--fs "$fs" --size 4GiB); fi
    "$BIN" run "$W" "$F" "${T[@]}" --reps 1 --sync none --cache keep --quiet \
      --json "$OUT/fsarena-like-$fs-$rep.json" > /dev/null
  done
  echo "fsarena defaults on $fs" >&2
  "$BIN" run "$W" "$F" "${T[@]}" --reps "$REPS" --quiet --json "$OUT/fsarena-default-$fs.json" > /dev/null
done
python3 bench/validate-bonnie.py "$OUT" $FSLIST

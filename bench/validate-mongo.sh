#!/usr/bin/env bash
# Validates fsarena's `mongo` workload. There is no packaged Mongo, so:
#  1. Generator: a C model of reiser_fract_tree that calls glibc's own srand()/rand()
#     (bench/mongo_fract_tree.c) prints each set's files, bytes and directories; fsarena's
#     create_N phases on tmpfs must write exactly those.
#  2. Side by side: each phase of mongo.pl (P=1) done by the usual tools — the C model for
#     create, cp -r, find | mongo_tools slinks, find | xargs mongo_tools read,
#     find -type f, find | perl rename, rm -r — timed from the shell, against fsarena's
#     phases, on the same kind of freshly made filesystem (fallocated image, direct-io loop,
#     mkfs as fsarena makes it), alternating the tools. Both sync inside the timing of the
#     writing phases (shell: `sync -f` = syncfs; fsarena: --sync end) and start every phase
#     cold (fsarena --cache cold, its default: syncfs, umount, sync + drop_caches, mount;
#     the shell does the same) — the machine is shared and others drop caches anyway, so
#     "warm" would be a lottery. Also compares df's used KiB with fsarena's space_used_kib
#     and filefrag's extent counts with fsarena's FIEMAP fragmentation.
#  3. Copy by data: coreutils ≥ 9 `cp -r` clones extents where it can (FICLONE on XFS, which
#     mkfs.xfs enables reflink for; copy_file_range elsewhere), while Mongo's cp of 2000 and
#     fsarena copy the bytes. So the copy is also timed with `cp -r --reflink=never`
#     (read/write) on the loop filesystems.
# PARTS selects parts (default "generator side copy"); the summary reads all of $OUT.
# Root. Raw results in $OUT; summary printed by bench/validate-mongo.py.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-/tmp/fsarena-validate-mongo}
FSLIST=${FSLIST:-"ext4 xfs tmpfs"}
SETS=${SETS:-"1 2 3 4"}
REPS=${REPS:-3}
PARTS=${PARTS:-"generator side copy"}
has() { [[ " $PARTS " == *" $1 "* ]]; }
cargo build --release -q
BIN=$PWD/target/release/fsarena
WORK=$(mktemp -d /var/tmp/fsarena-validate-mongo-XXXXXX)
mkdir -p "$OUT"
gcc -O2 -o "$WORK/mongo_fract_tree" bench/mongo_fract_tree.c
gcc -O2 -o "$WORK/mongo_tools" bench/mongo_tools.c
TREE=$WORK/mongo_fract_tree
TOOLS=$WORK/mongo_tools
MNT=$WORK/mnt
DEV=""
cleanup() {
  cd /
  if mountpoint -q "$MNT"; then umount "$MNT"; fi
  if [ -n "$DEV" ]; then losetup -d "$DEV" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
BYTES=(0 52428800 104857600 104857600 104857600)
MEDIAN=(0 100 1000 10000 100000)

# 1. The generator at full scale: C model vs fsarena's create phases (tmpfs, one run).
if has generator; then
  for s in 1 2 3 4; do
    echo "$s $("$TREE" summary "${BYTES[$s]}" "${MEDIAN[$s]}")"
  done > "$OUT/c-model.txt"
  "$BIN" run mongo:set=all --fs tmpfs --size 2GiB --reps 1 --sync none --cache keep --quiet \
    --image-dir "$WORK" --json "$OUT/generator.json" > /dev/null
fi

# 2. Side by side.
EXT4_INODES=300000 # set 1 needs 3 × 67295 inodes (files, copies, links); 1 GiB gives 65536
make_fs() { # like fsarena: preallocated image, direct-io loop, no discard, no lazy init
  mkdir -p "$MNT"
  FS=$1
  if [ "$1" = tmpfs ]; then mount -t tmpfs -o size=1G tmpfs "$MNT"; return; fi
  fallocate -l 1G "$WORK/img"
  DEV=$(losetup --find --show --direct-io=on "$WORK/img")
  case $1 in
    ext4) mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 -N $EXT4_INODES "$DEV" ;;
    xfs) mkfs.xfs -f -K "$DEV" > /dev/null ;;
  esac
  mount -t "$1" "$DEV" "$MNT"
}
cold() { # what fsarena's --cache cold does before each phase
  sync -f "$MNT"
  cd /
  if [ -n "$DEV" ]; then umount "$MNT"; fi
  sync
  echo 3 > /proc/sys/vm/drop_caches
  if [ -n "$DEV" ]; then mount -t "$FS" "$DEV" "$MNT"; fi
  cd "$MNT"
}
drop_fs() {
  cd /
  umount "$MNT"
  if [ -n "$DEV" ]; then losetup -d "$DEV"; DEV=""; rm -f "$WORK/img"; fi
}
now() { date +%s%N; }
timed() { # timed NAME CMD...: prints "NAME seconds"
  local name=$1 t0 t1
  shift
  t0=$(now)
  "$@"
  t1=$(now)
  echo "$name $(((t1 - t0) / 1000))e-6"
}
used_kib() { df -k --output=used "$MNT" | tail -n 1; }
survey() { # dirs, files, files over 16 KiB, their extents (filefrag merges contiguous ones)
  echo "${1}_dirs $(find "$MNT" -mindepth 1 -type d -not -name lost+found | wc -l)"
  echo "${1}_files $(find "$MNT" -type f | wc -l)"
  echo "${1}_files_over_16k $(find "$MNT" -type f -size +16k | wc -l)"
  if [ -n "$DEV" ]; then
    echo "${1}_fragments $(find "$MNT" -type f -size +16k -print0 | xargs -0 -r filefrag |
      awk '{ s += $(NF-2) } END { print s + 0 }')"
  fi
}
shell_mongo() { # mongo.pl's seven phases for one set, P=1, in $MNT
  local s=$1 base
  cd "$MNT"
  base=$(used_kib)
  cold
  timed create sh -c "'$TREE' create ${BYTES[$s]} ${MEDIAN[$s]} testdir1-0 > /dev/null && sync -f ."
  echo "create_space_used_kib $(($(used_kib) - base))"
  survey create
  cold
  timed copy sh -c 'cp -r testdir1-0 testdir2-0 && sync -f .'
  echo "copy_space_used_kib $(($(used_kib) - base))"
  survey copy
  cold
  timed symlinks sh -c "find testdir1-0 -type f -printf '%f %p.lnk\n' | '$TOOLS' slinks && sync -f ."
  cold
  timed read sh -c "find . -type f -print0 | xargs -0 '$TOOLS' read > /dev/null"
  cold
  timed stats sh -c 'find . -type f > /dev/null'
  cold
  timed rename sh -c "find testdir1-0 -type f | perl -e 'while (<>) { chomp; rename(\$_, \"\$_.r\") or die \$! }' && sync -f ."
  cold
  timed delete sh -c 'rm -r testdir1-0 && rm -r testdir2-0 && sync -f .'
  [ -z "$(ls -A "$MNT" | grep -v lost+found)" ] || { echo "shell run left files" >&2; exit 1; }
}

if has side; then
  for fs in $FSLIST; do
    if [ "$fs" = tmpfs ]; then T=(--fs tmpfs --size 1GiB); else T=(--fs "$fs" --size 1GiB); fi
    [ "$fs" = ext4 ] && T+=(--mkfs-opt "ext4=-N $EXT4_INODES")
    for s in $SETS; do
      for rep in $(seq "$REPS"); do
        echo "shell mongo set $s on $fs, rep $rep" >&2
        make_fs "$fs"
        shell_mongo "$s" > "$OUT/shell-$fs-$s-$rep.txt"
        drop_fs
        echo "fsarena mongo set $s on $fs, rep $rep" >&2
        "$BIN" run "mongo:set=$s" "${T[@]}" --reps 1 --sync end --cache cold --quiet \
          --image-dir "$WORK" --json "$OUT/fsarena-$fs-$s-$rep.json" > /dev/null
      done
    done
  done
fi

# 3. cp -r --reflink=never of a freshly created tree, cold, synced (fsarena's figures: part 2).
if has copy; then
  for fs in $FSLIST; do
    [ "$fs" = tmpfs ] && continue
    for s in $SETS; do
      for rep in $(seq "$REPS"); do
        echo "cp --reflink=never, set $s on $fs, rep $rep" >&2
        make_fs "$fs"
        cd "$MNT"
        "$TREE" create "${BYTES[$s]}" "${MEDIAN[$s]}" testdir1-0 > /dev/null
        cold
        timed copy_bytes sh -c 'cp -r --reflink=never testdir1-0 testdir2-0 && sync -f .' \
          > "$OUT/cp-never-$fs-$s-$rep.txt"
        drop_fs
      done
    done
  done
fi
python3 "$ROOT/bench/validate-mongo.py" "$OUT" "$FSLIST" "$SETS" "$REPS"

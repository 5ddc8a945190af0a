#!/usr/bin/env bash
# Validates two workloads against their peer tools, side by side on the same kinds of
# filesystem (a fresh 1 GiB ext4 loop image made the way fsarena makes its own, and tmpfs),
# alternating the tools repetition by repetition. Root. Raw outputs go to $OUT (default
# /tmp/fsarena-validate-small); bench/validate-small.py prints the tables used in
# docs/validation.md (the smallfiles and dbrandom section).
#
#  * smallfiles create rate vs fs_mark 3.3 (Debian fsmark): same file count, size and sync
#    method; fs_mark -D/-N puts 100 files in each of files/100 subdirectories of one
#    directory, fsarena gets the same with per_dir=100 and a fanout that keeps every
#    directory a child of the root ("flat"), and also runs its default 10-way tree ("tree").
#  * dbrandom (random.c defaults: 1,10,100,250,500 MiB, 100×100 tries of 16 KiB, 25%
#    written back + fsync) vs fio doing random 16 KiB reads and writes (80% reads) over the
#    same five files, unaligned, buffered, with writes made durable either by O_SYNC
#    (--sync=1) or by fio's --fsync=1; cold (caches dropped, filesystem remounted) and warm.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fsarena-validate-small}
REPS=${REPS:-3}
FSLIST=${FSLIST:-"ext4 tmpfs"}
PARTS=${PARTS:-"smallfiles dbrandom"}
# smallfiles scenarios: name:files:bytes per file:sync (none = fs_mark -S 0, each = -S 1)
SF_SCENARIOS=${SF_SCENARIOS:-"empty405k:405000:0:none morton100k:100000:4096:none fsync5k:5000:4096:each"}
DB_FILES=${DB_FILES:-"1 10 100 250 500"}   # MiB, random.c's files
DB_CYCLES=${DB_CYCLES:-100}
DB_TRIES=${DB_TRIES:-100}
DB_BLOCK=${DB_BLOCK:-16384}
DB_MODES=${DB_MODES:-"cold warm"}           # on tmpfs only warm: drop_caches keeps tmpfs data
EXT4_INODES=450000   # for smallfiles: 405,000 files need more than mkfs's default 65,536
for tool in fs_mark fio; do command -v $tool >/dev/null || { echo "needs $tool" >&2; exit 1; }; done
cargo build --release -q
BIN=$PWD/target/release/fsarena
WORK=$(mktemp -d /var/tmp/vsm-XXXXXX)   # short: fs_mark wants a -d path under 40 bytes
mkdir -p "$OUT"
MNT=$WORK/m
DEV=""
cleanup() {
  if mountpoint -q "$MNT"; then umount "$MNT"; fi
  if [ -n "$DEV" ]; then losetup -d "$DEV" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

make_fs() { # fs, extra mkfs.ext4 options; like fsarena: preallocated image, direct-io
  mkdir -p "$MNT"            # loop, no discard, no lazy init
  if [ "$1" = tmpfs ]; then mount -t tmpfs -o size=1G tmpfs "$MNT"; return; fi
  fallocate -l 1G "$WORK/img"
  DEV=$(losetup --find --show --direct-io=on "$WORK/img")
  mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "${@:2}" "$DEV"
  mount -t ext4 "$DEV" "$MNT"
}
drop_fs() {
  umount "$MNT"
  if [ -n "$DEV" ]; then losetup -d "$DEV"; DEV=""; rm -f "$WORK/img"; fi
}
cold() { # what fsarena --cache cold does before a phase: sync, drop caches, remount
  sync
  if [ -n "$DEV" ]; then umount "$MNT"; fi
  echo 3 > /proc/sys/vm/drop_caches
  if [ -n "$DEV" ]; then mount -t ext4 "$DEV" "$MNT"; fi
}
fsarena() { # fs, json, args...
  local fs=$1 json=$2; shift 2
  "$BIN" run "$@" --fs "$fs" --size 1GiB --reps 1 --data zeros --image-dir "$WORK/fsarena" --quiet \
    --json "$json" > /dev/null
}

rotate() { # rep, items...: the items rotated by rep - 1, so no tool always runs first
  local r=$(( ($1 - 1) % ($# - 1) )); shift
  echo "${@:r+1}" "${@:1:r}"
}

sf_fsmark() { # fs_mark's create loop; files stay (-k) until the filesystem goes
  echo "smallfiles $name on $fs, rep $rep: fs_mark -S $method" >&2
  make_fs "$fs" -N $EXT4_INODES
  # -p 10 -r 8: 10-byte names (2 time-stamp characters and 8 random ones), close to
  # fsarena's f<index>; -w 16384 writes a 4 KiB file in one write(2), as fsarena does.
  fs_mark -d "$MNT/fsm" -n "$n" -s "$size" -w 16384 -S "$method" -D "$dirs" -N 100 \
    -p 10 -r 8 -k -L 1 > "$OUT/fsmark-$name-$fs-$rep.txt" 2>&1 ||
    { cat "$OUT/fsmark-$name-$fs-$rep.txt" >&2; exit 1; }
  drop_fs
}
sf_fsarena() { # shape: flat (every directory a child of the root, like fs_mark -D) or tree
  local shape=$1 fanout
  fanout=$([ "$shape" = flat ] && echo "$dirs" || echo 10)
  echo "smallfiles $name on $fs, rep $rep: fsarena $shape --sync $sync" >&2
  local inodes=()
  if [ "$fs" = ext4 ]; then inodes=(--mkfs-opt "ext4=-N $EXT4_INODES"); fi
  fsarena "$fs" "$OUT/sf-$name-$shape-$fs-$rep.json" \
    "smallfiles:files=$n,per_dir=100,fanout=$fanout,size_min=$size,size_max=$size" \
    --sync "$sync" --cache keep "${inodes[@]}"
}

if [[ " $PARTS " == *" smallfiles "* ]]; then
  for fs in $FSLIST; do
    for sc in $SF_SCENARIOS; do
      IFS=: read -r name n size sync <<< "$sc"
      method=$([ "$sync" = each ] && echo 1 || echo 0)
      dirs=$((n / 100))
      for rep in $(seq "$REPS"); do
        for run in $(rotate "$rep" fsmark flat tree); do
          case $run in
            fsmark) sf_fsmark ;;
            *) sf_fsarena "$run" ;;
          esac
        done
      done
    done
  done
fi

db_fsarena() {
  echo "dbrandom on $fs, $mode, rep $rep: fsarena" >&2
  local cache
  cache=$([ "$mode" = cold ] && echo cold || echo keep)
  fsarena "$fs" "$OUT/db-$fs-$mode-$rep.json" \
    "dbrandom:files=$list,cycles=$DB_CYCLES,tries=$DB_TRIES,block=$DB_BLOCK" \
    --sync end --cache "$cache"
}
db_fio() { # durable: sync (O_SYNC writes) or fsync (fio's --fsync=1)
  local durable=$1 k=0 inval=0
  echo "dbrandom on $fs, $mode, rep $rep: fio --$durable=1" >&2
  make_fs "$fs"
  for m in $DB_FILES; do # the article's dd, synced like fsarena's create (--sync end)
    dd if=/dev/zero of="$MNT/$k-$m.dat" bs=1M count="$m" conv=fsync status=none
    k=$((k + 1))
  done
  if [ "$mode" = cold ]; then cold; inval=1; fi
  # ioengine=sync: lseek + read/write, as random.c. blockalign=1: byte offsets.
  # fadvise_hint=0: no POSIX_FADV_RANDOM (random.c gives no hint, so readahead works as
  # for it). random:N switches to a random file every N I/Os (one cycle's reads + writes).
  fio --name=dbrandom --directory="$MNT" --filename="$names" --ioengine=sync \
    --rw=randrw --rwmixread=80 --bs="$DB_BLOCK" --blockalign=1 --norandommap \
    --fadvise_hint=0 --file_service_type=random:$per_file --io_size=${io_kib}k \
    --"$durable"=1 --invalidate=$inval --output-format=json \
    > "$OUT/fio-$durable-$fs-$mode-$rep.json"
  drop_fs
}

if [[ " $PARTS " == *" dbrandom "* ]]; then
  list=$(echo $DB_FILES | tr ' ' ,)
  names=""; k=0
  for m in $DB_FILES; do names="$names:$k-$m.dat"; k=$((k + 1)); done
  names=${names#:}
  ios=$((DB_CYCLES * DB_TRIES * 5 / 4))   # reads plus 25% write-backs
  io_kib=$((ios * DB_BLOCK / 1024))
  per_file=$((DB_TRIES * 5 / 4))
  for fs in $FSLIST; do
    modes=$([ "$fs" = tmpfs ] && echo warm || echo "$DB_MODES")
    for mode in $modes; do
      for rep in $(seq "$REPS"); do
        for run in $(rotate "$rep" fsarena sync fsync); do
          case $run in
            fsarena) db_fsarena ;;
            *) db_fio "$run" ;;
          esac
        done
      done
    done
  done
fi
python3 bench/validate-small.py "$OUT" "$REPS" $FSLIST

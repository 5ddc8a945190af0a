#!/usr/bin/env bash
# Validates two workloads against their peer tools, side by side on the same kinds of
# filesystem (a fresh 1 GiB ext4 loop image made the way fsarena makes its own, and tmpfs),
# alternating the tools repetition by repetition. Root. Raw outputs go to $OUT (default
# /tmp/fsarena-validate-small); bench/validate-small.py prints the tables used in
# docs/validation.d/smallfiles-dbrandom.md.
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
EXT4_INODES=450000                          # 405,000 files need more than mkfs's default
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

make_fs() { # like fsarena: preallocated image, direct-io loop, no discard, no lazy init
  mkdir -p "$MNT"
  if [ "$1" = tmpfs ]; then mount -t tmpfs -o size=1G tmpfs "$MNT"; return; fi
  fallocate -l 1G "$WORK/img"
  DEV=$(losetup --find --show --direct-io=on "$WORK/img")
  mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 -N $EXT4_INODES "$DEV"
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
  local t=(--fs "$fs" --size 1GiB)
  if [ "$fs" = ext4 ]; then t+=(--mkfs-opt "ext4=-N $EXT4_INODES"); fi
  "$BIN" run "$@" "${t[@]}" --reps 1 --data zeros --image-dir "$WORK/fsarena" --quiet \
    --json "$json" > /dev/null
}

if [[ " $PARTS " == *" smallfiles "* ]]; then
  for fs in $FSLIST; do
    for sc in $SF_SCENARIOS; do
      IFS=: read -r name n size sync <<< "$sc"
      method=$([ "$sync" = each ] && echo 1 || echo 0)
      dirs=$((n / 100))
      for rep in $(seq "$REPS"); do
        echo "smallfiles $name on $fs, rep $rep: fs_mark -S $method" >&2
        make_fs "$fs"
        # -p 10 -r 8: 10-byte names (2 time-stamp characters and 8 random ones), close to
        # fsarena's f<index>; -w 16384 writes a 4 KiB file in one write(2), as fsarena does.
        fs_mark -d "$MNT/fsm" -n "$n" -s "$size" -w 16384 -S "$method" -D "$dirs" -N 100 \
          -p 10 -r 8 -k -L 1 > "$OUT/fsmark-$name-$fs-$rep.txt" 2>&1 ||
          { cat "$OUT/fsmark-$name-$fs-$rep.txt" >&2; exit 1; }
        drop_fs
        for shape in flat tree; do
          fanout=$([ $shape = flat ] && echo $dirs || echo 10)
          echo "smallfiles $name on $fs, rep $rep: fsarena $shape --sync $sync" >&2
          fsarena "$fs" "$OUT/sf-$name-$shape-$fs-$rep.json" \
            "smallfiles:files=$n,per_dir=100,fanout=$fanout,size_min=$size,size_max=$size" \
            --sync "$sync" --cache keep
        done
      done
    done
  done
fi

if [[ " $PARTS " == *" dbrandom "* ]]; then
  list=$(echo $DB_FILES | tr ' ' ,)
  names=""; k=0
  for m in $DB_FILES; do names="$names:$k-$m.dat"; k=$((k + 1)); done
  names=${names#:}
  ios=$((DB_CYCLES * DB_TRIES * 5 / 4))   # reads plus 25% write-backs
  io_kib=$((ios * DB_BLOCK / 1024))
  per_file=$((DB_TRIES * 5 / 4))
  for fs in $FSLIST; do
    modes=$([ "$fs" = tmpfs ] && echo warm || echo "cold warm")
    for mode in $modes; do
      for rep in $(seq "$REPS"); do
        echo "dbrandom on $fs, $mode, rep $rep: fsarena" >&2
        cache=$([ $mode = cold ] && echo cold || echo keep)
        fsarena "$fs" "$OUT/db-$fs-$mode-$rep.json" \
          "dbrandom:files=$list,cycles=$DB_CYCLES,tries=$DB_TRIES,block=$DB_BLOCK" \
          --sync end --cache "$cache"
        for durable in sync fsync; do
          echo "dbrandom on $fs, $mode, rep $rep: fio --$durable=1" >&2
          make_fs "$fs"
          k=0
          for m in $DB_FILES; do
            dd if=/dev/zero of="$MNT/$k-$m.dat" bs=1M count="$m" conv=fsync status=none
            k=$((k + 1))
          done
          if [ $mode = cold ]; then cold; inval=1; else inval=0; fi
          # ioengine=sync: lseek + read/write, as random.c. blockalign=1: byte offsets.
          # fadvise_hint=0: no POSIX_FADV_RANDOM (random.c gives no hint, so readahead
          # works as for it). random:N switches to a random file every N I/Os (a cycle).
          fio --name=dbrandom --directory="$MNT" --filename="$names" --ioengine=sync \
            --rw=randrw --rwmixread=80 --bs="$DB_BLOCK" --blockalign=1 --norandommap \
            --fadvise_hint=0 --file_service_type=random:$per_file --io_size=${io_kib}k \
            --"$durable"=1 --invalidate=$inval --output-format=json \
            > "$OUT/fio-$durable-$fs-$mode-$rep.json"
          drop_fs
        done
      done
    done
  done
fi
python3 bench/validate-small.py "$OUT" "$REPS" $FSLIST

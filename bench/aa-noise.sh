#!/bin/bash
# A/A noise, before/after: the same ext4 twice in one plan (smallfiles 10,000 files of up to
# 4 KiB, postmark 1,000 files / 5,000 transactions, 6 repetitions), run alternately with
# two fsarena binaries, ROUNDS times each; a sampler logs the disk's counters and the
# machine's drop_caches count every second. Then: python3 bench/aa-noise.py "$OUT".
#
#   BEFORE=/path/old/fsarena AFTER=target/debug/fsarena OUT=/tmp/aa ROUNDS=5 bash bench/aa-noise.sh
#
# DISK is the block device under OUT's image directory (default vda). Images are 512 MiB.
set -euo pipefail
: "${BEFORE:?path of the first fsarena binary}" "${AFTER:?path of the second}"
OUT=${OUT:-/tmp/aa-noise}; ROUNDS=${ROUNDS:-5}; DISK=${DISK:-vda}
mkdir -p "$OUT"
cat > "$OUT/aa.toml" <<TOML
description = "A/A: the same ext4 twice"
[defaults]
size = "512MiB"
image_dir = "$OUT/img"
reps = 6
[[target]]
fs = "ext4"
name = "a"
[[target]]
fs = "ext4"
name = "b"
[[workload]]
kind = "smallfiles"
files = 10000
size_max = "4KiB"
[[workload]]
kind = "postmark"
number = 1000
transactions = 5000
TOML
# epoch, disk read sectors, write sectors, drop_caches so far
( while true; do
    echo "$(date +%s) $(awk '{print $3, $7}' /sys/block/$DISK/stat) $(awk '/^drop_pagecache/{print $2}' /proc/vmstat)"
    sleep 1
  done ) > "$OUT/disk.log" &
sampler=$!
trap 'kill $sampler' EXIT
run() { # TAG BINARY
  local t0; t0=$(date +%s)
  "$2" run --plan "$OUT/aa.toml" --db "$OUT/aa.db" --quiet > "$OUT/$1.out" 2>&1
  local id; id=$(sqlite3 "$OUT/aa.db" "select id from runs order by started_at desc limit 1")
  echo "$1 $id $t0 $(date +%s) load=$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/runs.txt"
}
for r in $(seq "$ROUNDS"); do
  run "before.$r" "$BEFORE"
  run "after.$r" "$AFTER"
done

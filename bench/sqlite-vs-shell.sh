#!/usr/bin/env bash
# fsarena's sqlite workload against Debian's sqlite3 shell, side by side on one ext4
# image, alternating runs: 2,000 one-row WAL transactions at synchronous=FULL, each side
# in a fresh directory and database. Also counts each side's fsync and fdatasync calls
# with strace. Usage (root): bench/sqlite-vs-shell.sh FSARENA [PAIRS]
set -euo pipefail
FSARENA=$(realpath "$1"); PAIRS=${2:-5}
work=$(mktemp -d /var/tmp/sqlite-vs-shell.XXXXXX)
cleanup() { umount "$work/mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
truncate -s 512M "$work/img" && mkfs.ext4 -q -F "$work/img"
mkdir "$work/mnt" && mount -o loop "$work/img" "$work/mnt"
cat > "$work/schema.sql" <<'SQL'
PRAGMA page_size=4096; PRAGMA journal_mode=WAL;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v BLOB NOT NULL);
CREATE INDEX t_k ON t(k);
SQL
{ echo "PRAGMA synchronous=FULL; PRAGMA cache_size=-2000;"
  echo ".dbconfig no_ckpt_on_close on"
  for _ in $(seq 2000); do
    echo "BEGIN IMMEDIATE; INSERT INTO t(k, v) VALUES (abs(random()) % 4294967296, randomblob(100)); COMMIT;"
  done; } > "$work/single.sql"
shell() {
  local d="$work/mnt/sh$1"; mkdir "$d"; sqlite3 "$d/bench.db" < "$work/schema.sql" > /dev/null
  local t0 t1; t0=$(date +%s.%N); $2 sqlite3 "$d/bench.db" < "$work/single.sql" > /dev/null; t1=$(date +%s.%N)
  echo "shell $(echo "2000 / ($t1 - $t0)" | bc -l | xargs printf '%.0f') tx/s"
}
fsa() {
  local d="$work/mnt/fa$1"; mkdir "$d"
  (cd "$work" && $2 "$FSARENA" run sqlite:mode=insert,rows=2000,batch=1 --dir "$d" --reps 1 \
    --cache keep --sync none --quiet --json "$work/fa$1.json" > /dev/null)
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print('fsarena', round([p for p in d['trials'][0]['phases'] if p['name']=='run'][0]['ops_per_s']), 'tx/s')" "$work/fa$1.json"
}
for i in $(seq "$PAIRS"); do shell "$i" ""; fsa "$i" ""; done
echo "system calls, one run each (strace -f -c):"
shell s "strace -f -c -e trace=fsync,fdatasync -o $work/shell.strace" > /dev/null
fsa s "strace -f -c -e trace=fsync,fdatasync -o $work/fsarena.strace" > /dev/null
for s in shell fsarena; do echo "$s:"; grep -E "fsync|fdatasync" "$work/$s.strace" | awk '{print "  " $NF, $4}'; done

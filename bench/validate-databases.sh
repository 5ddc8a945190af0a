#!/usr/bin/env bash
# fsarena's pgbench and db_bench workloads beside the same engines run by hand, on the same
# kind of freshly made filesystem with the same parameters, in N alternating pairs (by hand
# first in odd pairs, fsarena first in even ones):
#
#   bash bench/validate-databases.sh pgbench  FS [N]   # scale 10, 1 client, 30 s
#   bash bench/validate-databases.sh db_bench FS [N]   # 200,000 keys, 100-byte values
#   bash bench/validate-databases.sh pgbench-steady FS [N]   # fsarena's steady profile
#
# pgbench-steady is pgbench:profile=steady by hand: scale 10, checkpoint_timeout=1min, a
# CHECKPOINT after the load, then 8 clients on 2 threads with prepared statements, an
# untimed warm-up of $STEADY_WARMUP s (default 60) and $STEADY_DURATION s timed (default
# 600, the profile's). By hand without the two settings fsarena adds to measure the server
# (log_checkpoints, track_wal_io_timing), so their cost shows in the ratio if any.
#
# By hand: a 1 GiB image in a temporary directory (fallocate), mkfs with fsarena's options
# for FS (ext4: -E nodiscard,lazy_itable_init=0,lazy_journal_init=0; xfs: -K; btrfs: -K),
# attached with losetup --direct-io=on and mounted; pgbench: initdb as postgres, the server
# on a socket in a 0700 directory (no TCP), `pgbench -i -s 10` then `pgbench -T 30`, its
# "tps = … (without initial connection time)"; db_bench: one process per benchmark as
# fsarena runs them. fsarena: `fsarena run … --fs FS --size 1GiB --reps 1 --cache keep
# --sync none` (no remount, no timed sync: as by hand). Prints one line per pair with
# both figures and their ratio fsarena/by hand; everything made is removed on exit.
set -euo pipefail
what=${1:?pgbench or db_bench}; fs=${2:?ext4, xfs or btrfs}; n=${3:-3}
bin=${FSARENA:-$PWD/target/release/fsarena}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d /var/tmp/fsarena-validate-XXXXXX)
chmod 755 "$work"
mnt=$work/mnt; img=$work/img
# The runs by hand happen in $(…) subshells: what they make is found again by its path
# (the server by its pid file, the loop device by its backing image), not by a variable.
teardown_fs() {
  if [ -f "$mnt/pgdata/postmaster.pid" ]; then
    kill -INT "$(head -1 "$mnt/pgdata/postmaster.pid")" 2>/dev/null && sleep 2
  fi
  if mountpoint -q "$mnt"; then umount "$mnt"; fi
  local d
  for d in $(losetup -n -O NAME -j "$img" 2>/dev/null); do losetup -d "$d"; done
}
cleanup() {
  teardown_fs
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

mkfs_opts() {
  case $fs in
    ext4) echo "-F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0" ;;
    xfs) echo "-f -K" ;;
    btrfs) echo "-f -K" ;;
  esac
}

fresh() { # a fresh FS on a 1 GiB loop image at $mnt
  teardown_fs
  rm -f "$img"; fallocate -l 1G "$img"
  local dev; dev=$(losetup -f --show --direct-io=on "$img")
  # shellcheck disable=SC2046
  mkfs."$fs" $(mkfs_opts) "$dev" >/dev/null
  mkdir -p "$mnt"; mount "$dev" "$mnt"; chmod 755 "$mnt"
}

start_server() { # on a fresh FS; ARGS: more server settings (-c name=value)
  fresh
  pgdata=$mnt/pgdata; sock=$work/sock
  install -d -m 700 -o postgres -g postgres "$pgdata" "$sock"
  runuser -u postgres -- "$pgbin/initdb" -D "$pgdata" -U postgres --auth=trust -E UTF8 \
    --locale=C >/dev/null
  runuser -u postgres -- "$pgbin/postgres" -D "$pgdata" -c listen_addresses= \
    -c unix_socket_directories="$sock" "$@" >"$work/server.log" 2>&1 &
  until [ "$(sed -n 8p "$pgdata/postmaster.pid" 2>/dev/null | tr -d ' ')" = ready ]; do sleep 0.1; done
}
by_hand_pgbench() {
  start_server
  "$pgbin/pgbench" -h "$sock" -U postgres -i -s 10 -q postgres >/dev/null 2>&1
  "$pgbin/pgbench" -h "$sock" -U postgres -c 1 -j 1 -T 30 postgres 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p'
  kill -INT "$(head -1 "$pgdata/postmaster.pid")"; wait || true
  rm -rf "$sock"
  teardown_fs
}

by_hand_pgbench_steady() {
  start_server -c checkpoint_timeout=1min
  local pg=("$pgbin/pgbench" -h "$sock" -U postgres)
  "${pg[@]}" -i -s 10 -q postgres >/dev/null 2>&1
  "$pgbin/psql" -h "$sock" -U postgres -X -q -c CHECKPOINT postgres
  "${pg[@]}" -c 8 -j 2 -M prepared -T "$warmup" postgres >/dev/null 2>&1
  "${pg[@]}" -c 8 -j 2 -M prepared -T "$duration" postgres 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p'
  kill -INT "$(head -1 "$pgdata/postmaster.pid")"; wait || true
  rm -rf "$sock"
  teardown_fs
}
warmup=${STEADY_WARMUP:-60}; duration=${STEADY_DURATION:-600}
by_fsarena() { # WORKLOAD: prints the figure of each phase named in $phases
  local json=$work/out.json
  "$bin" run "$1" --fs "$fs" --size 1GiB --reps 1 --cache keep --sync none --quiet \
    --image-dir "$work/images" --db "$work/r.db" --json "$json" >/dev/null
  python3 - "$json" "$2" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
phases = {p["name"]: p for p in v["trials"][0]["phases"]}
for key in sys.argv[2].split(","):
    phase, fig = key.split(":")
    p = phases[phase]
    print(p["extra"][fig] if fig in p["extra"] else p[fig], end=" ")
print()
EOF
}

by_hand_db_bench() {
  fresh
  for b in fillseq fillrandom overwrite readrandom readwhilewriting; do
    existing=1; case $b in fill*) existing=0 ;; esac
    db_bench --db="$mnt/rocksdb" --benchmarks=$b --use_existing_db=$existing --num=200000 \
      --value_size=100 --sync=0 --threads=1 --seed=42 --histogram=1 --statistics=1 2>&1 |
      sed -n "s/^$b *: .* \([0-9]*\) ops\/sec .*/\1/p" | tr '\n' ' '
  done
  echo
  teardown_fs
}

for i in $(seq 1 "$n"); do
  case $what in
    pgbench)
      if [ $((i % 2)) = 1 ]; then h=$(by_hand_pgbench); f=$(by_fsarena pgbench:scale=10,duration=30 run:pgbench_tps,run:ops_per_s)
      else f=$(by_fsarena pgbench:scale=10,duration=30 run:pgbench_tps,run:ops_per_s); h=$(by_hand_pgbench); fi
      read -r ftps fops <<<"$f"
      python3 -c "import sys; h,f,o=map(float,sys.argv[1:]); print(f'pair $i $fs pgbench tps: by hand {h:.1f}, fsarena {f:.1f} (its transactions/s {o:.1f}), ratio {f/h:.3f}')" "$h" "$ftps" "$fops"
      ;;
    pgbench-steady)
      spec=pgbench:profile=steady,warmup=$warmup,duration=$duration
      if [ $((i % 2)) = 1 ]; then h=$(by_hand_pgbench_steady); f=$(by_fsarena "$spec" run:pgbench_tps,run:ops_per_s)
      else f=$(by_fsarena "$spec" run:pgbench_tps,run:ops_per_s); h=$(by_hand_pgbench_steady); fi
      read -r ftps fops <<<"$f"
      python3 -c "import sys; h,f,o=map(float,sys.argv[1:]); print(f'pair $i $fs pgbench steady tps: by hand {h:.1f}, fsarena {f:.1f} (its transactions/s {o:.1f}), ratio {f/h:.3f}')" "$h" "$ftps" "$fops"
      ;;
    db_bench)
      spec=db_bench:num=200000,value_size=100
      figs=fillseq:db_bench_ops_per_s,fillrandom:db_bench_ops_per_s,overwrite:db_bench_ops_per_s,readrandom:db_bench_ops_per_s,readwhilewriting:db_bench_ops_per_s
      if [ $((i % 2)) = 1 ]; then h=$(by_hand_db_bench); f=$(by_fsarena $spec $figs)
      else f=$(by_fsarena $spec $figs); h=$(by_hand_db_bench); fi
      python3 -c "
import sys
h = list(map(float, sys.argv[1].split())); f = list(map(float, sys.argv[2].split()))
names = ['fillseq', 'fillrandom', 'overwrite', 'readrandom', 'readwhilewriting']
print('pair $i $fs db_bench ops/s, fsarena/by hand: ' + ', '.join(f'{n} {b:.0f}/{a:.0f} = {b/a:.2f}' for n, a, b in zip(names, h, f)))
" "$h" "$f"
      ;;
  esac
done

#!/usr/bin/env bash
# How many crash states `crash` checks per minute, per filesystem and pattern:
#
#   bash bench/crash.sh [FS,...] [PATTERN] [STATES]   # default: ext4,xfs,btrfs fsync-write 100
#
# One `fsarena run` of the crash workload (1 repetition) per filesystem in a fresh image
# directory. Each pattern's phase carries `crash_states` and `crash_check_s` (the time to
# build, recover, check, repair where needed, mount and judge them, two at a time); the rate
# is their ratio. The target (issue 39) is 200 states a minute for a small image on a 2-core
# machine. Everything made is removed on exit.
set -euo pipefail
fss=${1:-ext4,xfs,btrfs}; pattern=${2:-fsync-write}; states=${3:-100}
bin=${FSARENA:-$PWD/target/release/fsarena}
work=$(mktemp -d /var/tmp/fsarena-crash-bench-XXXXXX)
cleanup() {
  "$bin" cleanup --image-dir "$work/img" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$bin" run "crash:pattern=$pattern,states=$states" --fs "$fss" --size 512MiB --reps 1 \
  --quiet --image-dir "$work/img" --db "$work/r.db" --json "$work/r.json" >/dev/null
python3 - "$work/r.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
print(f"{'target':<12} {'pattern':<24} {'states':>6} {'check s':>8} {'states/min':>10} "
      f"{'writes':>7} {'flushes':>7} {'fsyncs':>6} {'bad':>4}")
for t in run["trials"]:
    for p in t["phases"]:
        x = p.get("extra", {})
        if "crash_states" not in x:
            continue
        rate = 60 * x["crash_states"] / x["crash_check_s"] if x["crash_check_s"] else 0
        fs = x.get("crash_fsyncs")
        print(f"{t['target']:<12} {p['name']:<24} {x['crash_states']:>6.0f} "
              f"{x['crash_check_s']:>8.1f} {rate:>10.0f} {x['crash_writes']:>7.0f} "
              f"{x['crash_flushes']:>7.0f} {'-' if fs is None else f'{fs:.0f}':>6} "
              f"{x['crash_bad_states']:>4.0f}")
PY

#!/bin/bash
# The pricing model checked on a device whose speed fsarena controls (docs/pricing.md,
# docs/validation/2026-12-pricing.md): a loop device (direct I/O, over a preallocated
# 1 GiB image) throttled by the cgroup-v1 blkio controller at the root cgroup to
# IOPS reads and IOPS writes per second and MBPS MiB/s each way, like a cloud volume.
# Every process and kernel thread (writeback, jbd2, xfs and btrfs workers) is in the root
# blkio cgroup here, so all bios sent to the loop device are throttled, whoever sends them.
#
# 1. An unthrottled run probes the loop device itself: its service times become the base
#    of a profile (blkio-IOPS.json) that adds the throttle's caps, per direction.
# 2. With the throttle set, ext4, xfs and btrfs run the quick suite's workloads, REPS
#    repetitions each, priced on that profile and on `measured` (the throttled device as
#    the run's own probe saw it).
# 3. bench/price-validate.py prints the agreement table.
#
# Usage (root): bench/price-validate.sh [FSARENA] ; env REPS (3), IOPS (3000), MBPS (125)
set -euo pipefail
FSARENA=${1:-target/debug/fsarena}
FSARENA=$(realpath "$FSARENA")
HERE=$(dirname "$(realpath "$0")")
REPS=${REPS:-3}
IOPS=${IOPS:-3000}
MBPS=${MBPS:-125}
BPS=$((MBPS * 1048576))
CG=/sys/fs/cgroup/blkio
[ -w "$CG/blkio.throttle.read_iops_device" ] || { echo "SKIP: no cgroup-v1 blkio throttle at $CG (needs root)"; exit 0; }
WORKLOADS=(
  "bonnie:size=256MiB,seeks=8000"
  "bonnie-files:files=24"
  "postmark:number=5000,transactions=10000"
  "smallfiles:files=20000,size_max=4KiB"
  "dbrandom:scale=0.1,cycles=100"
  "metascan:scale=0.5,passes=2"
)
W=$(mktemp -d /var/tmp/fsarena-price.XXXXXX)
DEV=""
MM=""
throttle() { # $1: iops, $2: bytes/s (0: none)
  for d in read write; do
    echo "$MM $1" >"$CG/blkio.throttle.${d}_iops_device"
    echo "$MM $2" >"$CG/blkio.throttle.${d}_bps_device"
  done
}
cleanup() {
  [ -n "$MM" ] && throttle 0 0 || true
  [ -n "$DEV" ] && losetup -d "$DEV" || true
  rm -rf "$W"
}
trap cleanup EXIT
fallocate -l 1G "$W/dev.img"
DEV=$(losetup --direct-io=on -f --show "$W/dev.img")
MM=$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ')
echo "device $DEV ($MM) over $W/dev.img, direct I/O"
run() { # $1: fs, $2: json, rest: fsarena run arguments
  local fs=$1 json=$2
  shift 2
  "$FSARENA" --db "$W/db.sqlite" run --device "$DEV" --destroy-data-on "$DEV" --force \
    --fs "$fs" --json "$json" --quiet "$@" >"$W/$fs.log" 2>&1 ||
    { echo "run on $fs failed:"; tail -20 "$W/$fs.log"; exit 1; }
}
run ext4 "$W/base.json" --reps 1 "smallfiles:files=200"
python3 - "$W/base.json" "$IOPS" "$BPS" "$W/blkio-$IOPS.json" <<'PY'
import json, sys
base, iops, bps, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
p = json.load(open(base))["targets"][0]["device_probe"]
par = min(max(p["read_4k_parallel_iops"] * p["read_4k_us"] / 1e6, 1), p["parallel_readers"])
prof = {
    "name": f"blkio-{int(iops)}",
    "about": f"this loop device throttled to {int(iops)} IOPS and {bps/1048576:g} MiB/s each way",
    "read_4k_us": p["read_4k_us"], "write_4k_us": p["write_4k_us"], "flush_us": p["flush_us"],
    "read_mb_per_s": p["seq_read_mb_per_s"], "write_mb_per_s": p["seq_write_mb_per_s"],
    "parallelism": par,
    "cap": {"iops": iops, "mb_per_s": bps / 1e6, "io_unit_bytes": 1 << 40,
            "per_direction": True, "before_merge": True},
    "source": "fsarena's probe of the unthrottled loop device + the blkio throttle's settings",
}
json.dump(prof, open(out, "w"), indent=1)
print("unthrottled probe:", {k: round(v, 1) for k, v in p.items() if isinstance(v, float)})
PY
throttle "$IOPS" "$BPS"
for fs in ext4 xfs btrfs; do
  echo "$(date -u +%H:%M:%S) $fs: $REPS repetitions on $DEV throttled"
  run "$fs" "$W/$fs.json" --reps "$REPS" --price-on "measured,$W/blkio-$IOPS.json" "${WORKLOADS[@]}"
done
throttle 0 0
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$W"/*.json "$KEEP"/; fi
python3 "$HERE/price-validate.py" "blkio-$IOPS" "$W/ext4.json" "$W/xfs.json" "$W/btrfs.json"

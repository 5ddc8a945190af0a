#!/bin/bash
# The pricing model checked on a device whose speed fsarena controls (docs/pricing.md,
# docs/validation/2026-12-pricing.md): a loop device (direct I/O, over a preallocated
# 1 GiB image) throttled by the cgroup-v1 blkio controller at the root cgroup to
# IOPS reads and IOPS writes per second and MBPS MiB/s each way, like a cloud volume.
# Every process and kernel thread (writeback, jbd2, xfs and btrfs workers) is in the root
# blkio cgroup here, so all bios sent to the loop device are throttled, whoever sends them.
#
# 1. An unthrottled run probes one of the three loop devices (one per filesystem, alike):
#    its service times become the base of a profile (blkio-IOPS.json) that adds the
#    throttle's caps, per direction, counted before merging (the throttle counts bios).
# 2. With the throttle set on all three, one run of a plan with ext4, xfs and btrfs, each
#    on its own throttled device, through the quick suite's workloads, REPS repetitions,
#    the targets' order rotating each repetition (so that a competing load falls on all
#    three alike); priced on that profile and on `measured` (each throttled device as the
#    run's own probe saw it).
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
W=$(mktemp -d /var/tmp/fsarena-price.XXXXXX)
DEVS=()
MMS=()
throttle() { # $1: iops, $2: bytes/s (0: none)
  for mm in "${MMS[@]}"; do
    for d in read write; do
      echo "$mm $1" >"$CG/blkio.throttle.${d}_iops_device"
      echo "$mm $2" >"$CG/blkio.throttle.${d}_bps_device"
    done
  done
}
cleanup() {
  throttle 0 0 || true
  for d in "${DEVS[@]}"; do losetup -d "$d" || true; done
  rm -rf "$W"
}
trap cleanup EXIT
for fs in ext4 xfs btrfs; do
  fallocate -l 1G "$W/$fs.img"
  dev=$(losetup --direct-io=on -f --show "$W/$fs.img")
  DEVS+=("$dev")
  MMS+=("$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')")
done
echo "devices ${DEVS[*]} (${MMS[*]}) over 1 GiB images in $W, direct I/O"
"$FSARENA" --db "$W/db.sqlite" run --device "${DEVS[0]}" --destroy-data-on "${DEVS[0]}" \
  --fs ext4 --reps 1 --quiet --json "$W/base.json" "smallfiles:files=200" >"$W/base.log" 2>&1 ||
  { tail -20 "$W/base.log"; exit 1; }
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
{
  echo "[defaults]"
  echo "reps = $REPS"
  for i in 0 1 2; do
    fs=(ext4 xfs btrfs)
    printf '[[target]]\nfs = "%s"\ndevice = "%s"\n' "${fs[$i]}" "${DEVS[$i]}"
  done
  printf '[[workload]]\nsuite = "quick"\n'
} >"$W/plan.toml"
echo "$(date -u +%H:%M:%S) ext4, xfs, btrfs: $REPS repetitions, each on its throttled device"
DEVLIST=$(IFS=,; echo "${DEVS[*]}")
"$FSARENA" --db "$W/db.sqlite" run --plan "$W/plan.toml" --destroy-data-on "$DEVLIST" --force \
  --quiet --price-on "measured,$W/blkio-$IOPS.json" --json "$W/all.json" >"$W/all.log" 2>&1 ||
  { tail -20 "$W/all.log"; exit 1; }
echo "$(date -u +%H:%M:%S) done"
throttle 0 0
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$W"/*.json "$KEEP"/; fi
python3 "$HERE/price-validate.py" "blkio-$IOPS" "$W/all.json"

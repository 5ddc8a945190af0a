#!/usr/bin/env bash
# How long `--age` takes, and how soon each later repetition starts from the kept image:
#
#   bash bench/age.sh [FS] [SIZE] [AGE] [REPS]   # default: ext4 4GiB desktop (fill 75, churn 2) 3
#
# One `fsarena run` of a small write job (16 MiB) with REPS repetitions in a fresh image
# directory: the first trial makes the filesystem, ages it and keeps the image; the later
# ones copy the kept image (a reflink where the image directory's filesystem has them, else a
# full copy) and mount it. Prints, per trial, the aging (its duration) or the copy of the
# kept image (its duration), the mount, the whole trial's wall time (making or copying, mounting, the job, unmounting: an upper bound
# of the time before the workload starts), and the fragmentation aging left. Targets
# (issue 38): aging a 4 GiB ext4 ≤ 3 minutes; a later repetition starting ≤ 10 s.
# Everything made is removed on exit.
set -euo pipefail
fs=${1:-ext4}; size=${2:-4GiB}; age=${3:-desktop}; reps=${4:-3}
bin=${FSARENA:-$PWD/target/release/fsarena}
work=$(mktemp -d /var/tmp/fsarena-age-bench-XXXXXX)
cleanup() {
  "$bin" cleanup --aged --image-dir "$work/img" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$bin" run job:rw=write,bs=1MiB,size=16MiB --fs "$fs" --size "$size" --age "$age" \
  --reps "$reps" --quiet --image-dir "$work/img" --db "$work/r.db" --json "$work/r.json" \
  >/dev/null
python3 - "$work/r.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
print(f"{'trial':>5}  {'aging or copy':>16}  {'mount':>7}  {'trial wall':>10}  "
      "fragments/file  free extents")
for t in run["trials"]:
    a = t["provision"]["aging"]
    aging = (f"copy {a['copy_s']:.1f} s" if a["reused"] else f"aged {a['seconds']:.1f} s")
    f = a.get("file_fragments") or {}
    s = a.get("free_space") or {}
    mount = t["provision"]["mount_s"]
    print(f"{t['rep']:>5}  {aging:>16}  {mount:>5.2f} s  {t['elapsed_s']:>8.1f} s  "
          f"mean {f.get('mean', 0):.2f} p99 {f.get('p99', 0)}  "
          f"{s.get('extents', 0)} ({s.get('method', '-')})")
a = run["trials"][0]["provision"]["aging"]
print(f"aged {a['spec']}: {a['bytes_written'] / 2**30:.2f} GiB written in "
      f"{a['operations']} operations, {a['files']} files, "
      f"{100 * a['used_bytes'] / a['capacity_bytes']:.0f}% used")
PY

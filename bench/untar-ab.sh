#!/usr/bin/env bash
# Before/after comparison of `untar` (issue 24): two fsarena binaries, BEFORE and AFTER,
# run alternately (B A, A B, …) PAIRS times for each SPEC given, on tmpfs (512 MiB), REPS
# repetitions per run. Prints per run the whole run's wall time measured from outside
# (what loading — decompressing — the archive costs shows here; it is untimed inside) and
# the extract phase's MB/s (median over the run's repetitions). Root.
#   BEFORE=/tmp/fsarena-old AFTER=target/release/fsarena PAIRS=8 \
#     bench/untar-ab.sh untar:archive=/tmp/inc.tar.gz untar:scale=0.1
set -euo pipefail
: "${BEFORE:?path of the binary before}" "${AFTER:?path of the binary after}"
PAIRS=${PAIRS:-3}
REPS=${REPS:-1}
OUT=$(mktemp -d /tmp/untar-ab.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
one() { # BIN SPEC LABEL
    local t0 t1
    t0=$(date +%s.%N)
    "$1" run "$2" --fs tmpfs --size 512MiB --reps "$REPS" --quiet --image-dir "$OUT/img" \
        --db "$OUT/r.db" --json "$OUT/r.json" >/dev/null
    t1=$(date +%s.%N)
    python3 - "$OUT/r.json" "$3" "$t0" "$t1" <<'PY'
import json, statistics, sys
trials = json.load(open(sys.argv[1]))["trials"]
mbs = [next(p for p in t["phases"] if p["name"] == "extract")["mb_per_s"] for t in trials]
wall = float(sys.argv[4]) - float(sys.argv[3])
print(f"{sys.argv[2]:<40} run {wall:6.2f} s  extract {statistics.median(mbs):7.1f} MB/s")
PY
}
for spec in "$@"; do
    for i in $(seq 1 "$PAIRS"); do
        order="B A"
        [ $((i % 2)) = 0 ] && order="A B"
        for w in $order; do
            bin=$BEFORE
            [ "$w" = A ] && bin=$AFTER
            one "$bin" "$spec" "$w ${spec##*/} #$i"
        done
    done
done

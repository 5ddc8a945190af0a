#!/usr/bin/env bash
# The real-run checks of issue 42's "done when", on this machine, with a release build:
#
#   bash bench/verdict-checks.sh aa   N OUT   # N runs of examples/plans/same-against-same.toml
#   bash bench/verdict-checks.sh gate N OUT   # N tries of the CI gate against a throttled job
#
# aa: each run's verdict, from its JSON (`verdicts` of `fsarena show --json`), counted as
# "no difference" when no pair of a phase is told apart. gate: per try, three runs of one
# rate-limited job on tmpfs with `--reps-for 10 --max-reps 12` — A and A' at rate=5MiB, B at rate=4MiB
# (a true 20% loss of the run phase) — then `compare A A' --fail-if-slower 10` (should
# exit 0) and `compare A B --fail-if-slower 10` (should exit 3). OUT keeps every run's
# database, output and exit status; the last lines print the tally.
set -euo pipefail
mode=${1:?aa or gate}; n=${2:?how many}; out=${3:?output directory}
bin=${FSARENA:-./target/release/fsarena}
mkdir -p "$out"; out=$(cd "$out" && pwd)
case $mode in
aa)
  for i in $(seq 1 "$n"); do
    db="$out/aa.db"
    "$bin" run --plan examples/plans/same-against-same.toml --db "$db" \
      --json "$out/aa-$i.json" >"$out/aa-$i.txt" 2>"$out/aa-$i.err" || echo "run $i: exit $?"
  done
  python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
quiet = 0
for i in range(1, n + 1):
    text = open(f"{out}/aa-{i}.txt").read()
    told = [l.strip() for l in text.splitlines() if "slower [" in l]
    print(f"run {i}: {'no difference' if not told else 'told apart: ' + '; '.join(told)}")
    quiet += not told
print(f"same-against-same: {quiet} of {n} runs told no difference apart")
PY
  ;;
gate)
  job="job:rw=randread,bs=4KiB,size=256MiB,runtime=2"
  pass=0; caught=0
  for i in $(seq 1 "$n"); do
    db="$out/gate-$i.db"
    declare -A id
    for side in a:5MiB a2:5MiB b:4MiB; do
      "$bin" run --fs tmpfs --db "$db" "$job,rate=${side#*:}" --reps-for 10 --max-reps 12 --quiet \
        >"$out/gate-$i-${side%%:*}.txt" 2>&1
      id[${side%%:*}]=$(grep -o '^run [0-9]*-[0-9]*-[0-9a-f]*' "$out/gate-$i-${side%%:*}.txt" | cut -c5-)
    done
    set +e
    "$bin" compare --db "$db" "${id[a]}" "${id[a2]}" --fail-if-slower 10 --gate-phase job:run \
      >"$out/gate-$i-aa.txt" 2>&1; aa=$?
    "$bin" compare --db "$db" "${id[a]}" "${id[b]}" --fail-if-slower 10 --gate-phase job:run \
      >"$out/gate-$i-ab.txt" 2>&1; ab=$?
    # Every phase gated (the layout too), for the record.
    "$bin" compare --db "$db" "${id[a]}" "${id[a2]}" --fail-if-slower 10 >"$out/gate-$i-aa-all.txt" 2>&1
    echo "try $i: all phases gated, A/A' exit $?"
    set -e
    echo "try $i: A/A' exit $aa, A/B exit $ab"
    [ "$aa" = 0 ] && pass=$((pass + 1))
    [ "$ab" = 3 ] && caught=$((caught + 1))
  done
  echo "gate: identical runs passed $pass of $n; the 20% loss failed it (exit 3) $caught of $n"
  ;;
*) echo "mode: aa or gate" >&2; exit 2 ;;
esac

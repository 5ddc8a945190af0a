#!/usr/bin/env bash
# fio's own example job files (the examples/ folder of a checkout of
# https://github.com/axboe/fio) through `fsarena run --fio`, on this machine:
#
#   bash bench/fio-examples.sh count   EXAMPLES_DIR          # what runs, what is refused
#   bash bench/fio-examples.sh compare EXAMPLES_DIR OUT [N]  # fsarena vs fio, N pairs (5)
#
# compare takes other files with FIO_CASES: lines `PATH|options|flags`, PATH under DIR
# (bench/fio-corpus.py names five of tests/fio-corpus).
#
# count: every *.fio is checked as a plan (`fsarena plan check`, nothing runs): "unchanged"
# when accepted as it is, "lenient" when accepted with --fio-lenient (the options it
# refused listed), else "refused" with the options fsarena cannot run at all; then the
# tally and, per reason, how many files it refuses.
#
# compare (root, fio): five examples on a tmpfs and on an ext4 loop image (1 GiB, in a
# temporary directory, attached with direct I/O), each run by fio and by fsarena in N alternating pairs (fio first
# in odd pairs, fsarena first in even ones), the target emptied before every run so that
# both lay their files out. The sizes and times are lowered for this machine by options
# added at the end of every job section (fsarena reads the same file): the file fsarena
# and fio run is kept in OUT. Figures are read from fio's JSON (`--output-format=json+`)
# and from fsarena's (`--fio-json`), one per group: the group's bytes and requests over its
# longest job's runtime, as fio's group_reporting reads them. A group agrees when the range of the N per-pair ratios fsarena/fio holds 1.
set -euo pipefail
mode=${1:?count or compare}; ex=${2:?fio examples directory}
bin=${FSARENA:-$PWD/target/release/fsarena}
here=$(cd "$(dirname "$0")" && pwd)
ex=$(cd "$ex" && pwd)

count() {
  local w; w=$(mktemp -d); mkdir "$w/d"
  plan() { # FILE LENIENT CACHE
    printf '[defaults]\nsync = "none"\ncache = "%s"\n[[target]]\ndir = "%s"\n[[workload]]\nfio = "%s"\nlenient = %s\n' \
      "$3" "$w/d" "$1" "$2" >"$w/p.toml"
  }
  check() { # FILE LENIENT: 0 when accepted; the refusal in $w/err, one issue a line
    plan "$1" "$2" cold
    COLUMNS=100000 "$bin" plan check "$w/p.toml" >/dev/null 2>"$w/err" && return 0
    grep -q 'asks for cache = "keep"' "$w/err" || return 1
    plan "$1" "$2" keep
    COLUMNS=100000 "$bin" plan check "$w/p.toml" >/dev/null 2>"$w/err"
  }
  : >"$w/reasons"
  for f in "$ex"/*.fio; do
    n=$(basename "$f")
    if check "$f" false; then echo "unchanged $n"; continue; fi
    cp "$w/err" "$w/strict"
    if check "$f" true; then
      echo "lenient $n: $(grep -o '^  [^ ]*: [^ ]*:' "$w/strict" | awk '{print $2}' | sort -u | tr '\n' ' ')"
      continue
    fi
    # The refusals --fio-lenient keeps: what fsarena cannot run at all.
    grep '^  ' "$w/err" | grep -v -- '(--fio-lenient:' >"$w/fatal" || true
    echo "refused $n: $(cut -c1-200 "$w/fatal" | sed 's/^ *[^ ]*: //' | tr '\n' '|')"
    python3 "$here/fio-corpus.py" reasons "$w/err" >>"$w/reasons"
  done >"$w/list"
  cat "$w/list"
  echo
  for v in unchanged lenient refused; do
    echo "$v: $(grep -c "^$v " "$w/list" || true)"
  done
  echo "refused files, per reason (a file can have several):"
  sort "$w/reasons" | uniq -c | sort -rn
  rm -rf "$w"
}

# lowered FILE OUT OPT...: FILE with OPT lines added at the end of every job section.
lowered() {
  python3 - "$@" <<'PY'
import sys
src, out, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
lines, res, in_job = open(src).read().splitlines(), [], False
def close():
    if in_job: res.extend(opts)
for l in lines:
    s = l.strip()
    if s.startswith("[") and s.endswith("]"):
        close(); in_job = not s[1:-1].startswith("global")
    res.append(l)
close()
open(out, "w").write("\n".join(res) + "\n")
PY
}

compare() {
  local out=${3:?output directory} n=${4:-5}
  [ "$(id -u)" = 0 ] || { echo "compare needs root (tmpfs and a loop image)"; exit 1; }
  command -v fio >/dev/null || apt-get install -y -o DPkg::Lock::Timeout=600 fio >/dev/null
  mkdir -p "$out"; out=$(cd "$out" && pwd)
  # Globals: the EXIT trap reads them after compare returns.
  w=$(mktemp -d /var/tmp/fio-examples.XXXXXX)
  mnt="$w/mnt" loopdev=""
  mkdir "$mnt"
  cleanup() {
    umount "$mnt" 2>/dev/null || true
    [ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
    rm -rf "$w"
  }
  # Ctrl-C or a kill leaves no mount, loop device or image behind either.
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  # example|options added to each job|fsarena flags
  local cases=(
    "fio-rand-read.fio|size=256m runtime=3|"
    "fio-rand-write.fio|size=256m runtime=3|"
    "fio-seq-write.fio|size=256m runtime=3|"
    "tiobench-example.fio|size=32m|"
    "zipf.fio|size=8g|"
  )
  [ -n "${FIO_CASES:-}" ] && mapfile -t cases <<<"$FIO_CASES"
  local extra=${FIO_EXAMPLES_FLAGS:-}
  echo "fio $(fio --version), $("$bin" --version), kernel $(uname -r), $(nproc) CPUs" | tee "$out/env.txt"
  for fs in tmpfs ext4; do
    case $fs in
    tmpfs) mount -t tmpfs -o size=2g fsarena-fio "$mnt" ;;
    ext4)
      truncate -s 1G "$w/ext4.img"; mkfs.ext4 -q -F "$w/ext4.img"
      # Direct I/O to the image: the host's page cache does not keep its blocks, so
      # fsarena's cold policy (drop_caches) and fio's invalidate (the job's file only)
      # leave the same cache state behind.
      loopdev=$(losetup -f --show --direct-io=on "$w/ext4.img"); mount "$loopdev" "$mnt" ;;
    esac
    for c in "${cases[@]}"; do
      IFS='|' read -r path opts flags <<<"$c"
      local name; name=$(basename "$path"); name=${name%.*}.fio
      local job="$out/${name%.fio}.fio"
      # shellcheck disable=SC2086
      lowered "$ex/$path" "$job" $opts
      for i in $(seq 1 "$n"); do
        local order="fio fsarena"; [ $((i % 2)) = 0 ] && order="fsarena fio"
        for tool in $order; do
          rm -rf "${mnt:?}"/*
          local res="$out/$fs-${name%.fio}-$i-$tool.json"
          if [ "$tool" = fio ]; then
            (cd "$mnt" && fio --output-format=json+ --output="$res" "$job" >/dev/null)
          else
            mkdir "$mnt/fsarena"
            # shellcheck disable=SC2086
            "$bin" run --fio "$job" $flags $extra --dir "$mnt/fsarena" --reps 1 \
              --db "$out/fsarena.db" --fio-json "$res" --quiet >"$out/$fs-${name%.fio}-$i.txt" 2>&1
          fi
        done
      done
    done
    rm -rf "${mnt:?}"/*
    umount "$mnt"
    [ -n "$loopdev" ] && { losetup -d "$loopdev"; loopdev=""; rm -f "$w/ext4.img"; }
  done
  python3 - "$out" "$n" <<'PY' | tee "$out/summary.txt"
import glob, json, os, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
def groups(path):
    """bytes/s, IOPS, bytes and requests per group, in group order: the group's bytes and
    requests over its longest job's runtime, as fio's group_reporting reads them (and
    fsarena's run phase)"""
    g = {}
    for j in json.load(open(path))["jobs"]:
        s = g.setdefault(j["groupid"], [0, 0, 0])
        for d in ("read", "write"):
            s[0] += j[d]["io_bytes"]; s[1] += j[d]["total_ios"]
            # Seconds from the bytes and bandwidth (runtime is whole ms: 0 for a short job).
            if j[d]["bw_bytes"]:
                s[2] = max(s[2], j[d]["io_bytes"] / j[d]["bw_bytes"])
    return [(b / t, o / t, b, o) for b, o, t in (g[k] for k in sorted(g))]
print(f"| example | fs | group | fio MB/s | fsarena MB/s | fio IOPS | fsarena IOPS | fsarena/fio per pair | agree | bytes, requests |")
print("|---|---|---|---|---|---|---|---|---|---|")
names = sorted({os.path.basename(p).split("-", 1)[1].rsplit("-", 2)[0] for p in glob.glob(f"{out}/*-1-fio.json")})
for fs in ("tmpfs", "ext4"):
    for name in names:
        runs = {t: [groups(f"{out}/{fs}-{name}-{i}-{t}.json") for i in range(1, n + 1)] for t in ("fio", "fsarena")}
        for k in range(len(runs["fio"][0])):
            fb = [r[k][0] for r in runs["fio"]]; sb = [r[k][0] for r in runs["fsarena"]]
            fo = [r[k][1] for r in runs["fio"]]; so = [r[k][1] for r in runs["fsarena"]]
            ratios = [s / f for s, f in zip(sb, fb) if f > 0]
            lo, hi = min(ratios), max(ratios)
            med = lambda v: statistics.median(v)
            # Equal in every pair (a size-based group), else fsarena's over fio's medians.
            moved = [(r[k][2], r[k][3]) for r in runs["fio"]] + [(r[k][2], r[k][3]) for r in runs["fsarena"]]
            same = "equal" if len(set(moved)) == 1 else (
                f"{med([r[k][2] for r in runs['fsarena']]) / med([r[k][2] for r in runs['fio']]):.2f}×, "
                f"{med([r[k][3] for r in runs['fsarena']]) / med([r[k][3] for r in runs['fio']]):.2f}×")
            print(f"| {name} | {fs} | {k + 1} | {med(fb)/1e6:.1f} | {med(sb)/1e6:.1f} | {med(fo):.0f} | {med(so):.0f} "
                  f"| {statistics.median(ratios):.2f} ({lo:.2f}–{hi:.2f}) | {'yes' if lo <= 1 <= hi else 'no'} | {same} |")
PY
}

case $mode in
count) count ;;
compare) compare "$@" ;;
*) echo "mode: count or compare"; exit 2 ;;
esac

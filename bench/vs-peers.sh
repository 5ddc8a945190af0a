#!/usr/bin/env bash
# fsarena against its peers, side by side (issue 7, part 3): each case runs fsarena and the
# peer alternately, A B then B A, PAIRS times on the same filesystem, and prints the median of the
# per-pair ratios fsarena/peer (higher is better for fsarena; the C floor row is
# floor_ns/fsarena_ns, 1.0 = as fast as a bare pread loop).
#
# Job cases; smallfiles vs fs_mark and postmark vs postmark are in bench/vs-peers-files.sh.
# Needs root (loop image for the io_uring and write cases). Usage:
#   cargo build --release && sudo bench/vs-peers.sh          # PAIRS=5 RUNTIME=3 by default
#
# Fairness: fio gets --norandommap (fsarena draws offsets with replacement too; the random
# map case gives both their random map: fio's default, fsarena's randommap=true) and
# --randrepeat=0; fsarena runs with --cache keep and --sync end, so that its freshly laid
# out files are on disk before the run (else their write-back competes with the run; the
# run phases here write nothing but the write case, which asks for end_fsync in both, and
# gets one fsync). Both tools lay out their own file of the same size on the same
# filesystem; read cases read files that are entirely in the page cache: they live on a
# tmpfs the script mounts, whose pages no drop_caches evicts (on a shared machine other
# runs drop the page cache, machine-wide, which turned "cached" pairs on a disk filesystem
# into disk reads; the kernel's read path differs — shmem instead of ext4's filemap_read —
# but it is the same for both tools). The figures are
# each tool's own in-job rate (fio's iops/bw, fsarena's run phase), so start-up is excluded
# on both sides.
set -euo pipefail

cd "$(dirname "$0")/.."
FSARENA=${FSARENA:-$PWD/target/release/fsarena}
PAIRS=${PAIRS:-5}
RUNTIME=${RUNTIME:-3}
WORK=${WORK:-/var/tmp/fsarena-vs-peers}
IMG_SIZE=${IMG_SIZE:-3G}

[ "$(id -u)" = 0 ] || { echo "vs-peers.sh: run as root (loop devices)" >&2; exit 2; }
[ -x "$FSARENA" ] || { echo "vs-peers.sh: build first: cargo build --release" >&2; exit 2; }
command -v fio >/dev/null || apt-get install -y -o DPkg::Lock::Timeout=600 fio >/dev/null
command -v cc >/dev/null || apt-get install -y -o DPkg::Lock::Timeout=600 gcc >/dev/null

# $WORK is deleted at start and end: only a directory this script made (its marker file).
if [ -e "$WORK" ] && [ ! -e "$WORK/.fsarena-vs-peers" ]; then
    echo "vs-peers.sh: $WORK exists and was not made by this script; not deleting it" >&2
    exit 2
fi
rm -rf "$WORK"
mkdir -p "$WORK/dir" "$WORK/mnt" "$WORK/state" "$WORK/cached"
touch "$WORK/.fsarena-vs-peers"
LOOP=
cleanup() {
    mountpoint -q "$WORK/cached" && umount "$WORK/cached"
    mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# An ext4 loop image as DESIGN.md's facts advise: allocated, no lazy init, direct-io. It is
# written in full, not fallocated: with an fallocated image, the seq write case's fsarena
# run was 3–4× slower whenever it came right after fio's (9 pairs, twice), and not once
# the image was written in full — the first write to an unwritten extent of the image file
# costs the host filesystem an extent conversion (our reading; not traced further).
dd if=/dev/zero of="$WORK/ext4.img" bs=4M count=$(( $(numfmt --from=iec "$IMG_SIZE") / 4194304 )) \
    conv=fsync status=none
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$WORK/ext4.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/ext4.img")
mount "$LOOP" "$WORK/mnt"
# Room for the 1 GiB cases: two 1 GiB job files per tool at once, the floor's file and the
# 256 MiB files the earlier cases leave.
mount -t tmpfs -o size=6g fsarena-vs-peers "$WORK/cached"
C=$WORK/cached

json_field() { # FILE EXPR: a python expression over d (the JSON document)
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# KEEP=DIR keeps every run's JSON there (fsarena's and fio's, named by the time they
# ended), to compare the phases of a slow run with a fast one's. With PERF=REGEX too, the
# runs of the cases whose name matches also run under `perf record -g` (kernel and user
# stacks, software clock sampling) and /proc/vmstat is kept before and after each: the
# JSON, the profile and the two vmstats of one run share their name's time stamp;
# PERF_RECORD=0 keeps the vmstats only (the profiler may change what it watches).
RUN_TAG=
keep() { # FILE TOOL
    [ -n "${KEEP:-}" ] && cp "$1" "$KEEP/${RUN_TAG:-$(date +%s%N)}-$2.json"
    return 0
}
# profiled TOOL CMD...: CMD, profiled when the case is (see PERF)
profiled() {
    local tool=$1; shift
    if [ -z "${KEEP:-}" ] || [ -z "${PERF:-}" ] || [[ ! "$CASE" =~ $PERF ]]; then
        RUN_TAG=; "$@"; return
    fi
    RUN_TAG=$(date +%s%N)
    cp /proc/vmstat "$KEEP/$RUN_TAG-$tool.vmstat-before"
    if [ "${PERF_RECORD:-1}" = 0 ]; then
        "$@"
    else
        perf record -q -g -o "$KEEP/$RUN_TAG-$tool.perf" -- "$@"
    fi
    cp /proc/vmstat "$KEEP/$RUN_TAG-$tool.vmstat-after"
}

# fsarena SPEC DIR FIELD: the run phase's FIELD (ops_per_s, mb_per_s, or ops_per_cpu_s:
# operations per second of CPU time, user + system, of the whole process)
fsarena_run() {
    rm -f "$WORK/fs.json"   # a failed run leaves none, and the case fails
    profiled fsarena "$FSARENA" --db "$WORK/state/results.db" run "job:$1" --dir "$2" --reps 1 \
        --cache keep --sync end --quiet --image-dir "$WORK/state" --json "$WORK/fs.json" >/dev/null
    keep "$WORK/fs.json" fsarena
    local run="[p for p in d['trials'][0]['phases'] if p['name']=='run'][0]"
    case $3 in
    ops_per_cpu_s) json_field "$WORK/fs.json" "(lambda p: p['ops']/(p['cpu_user_s']+p['cpu_sys_s']))($run)" ;;
    *) json_field "$WORK/fs.json" "$run['$3']" ;;
    esac
}

# fio FIELD ARGS...: FIELD iops or mbps summed over the jobs
fio_run() {
    local field=$1; shift
    rm -f "$WORK/fio.json"
    profiled fio fio --output-format=json --group_reporting "$@" >"$WORK/fio.json"
    keep "$WORK/fio.json" fio
    case $field in
    iops) json_field "$WORK/fio.json" "sum(j['read']['iops']+j['write']['iops'] for j in d['jobs'])" ;;
    mbps) json_field "$WORK/fio.json" "sum(j['read']['bw_bytes']+j['write']['bw_bytes'] for j in d['jobs'])/1e6" ;;
    # operations per second of the jobs' CPU time. fio's usr_cpu + sys_cpu is a % of the
    # runtime; under group_reporting it is the jobs' summed CPU time over their summed
    # runtimes (checked: numjobs=2 reported 99% while the fio process used 6.9 s of CPU
    # in 4.1 s), i.e. per job, so it is multiplied by numjobs.
    iops_per_cpu) json_field "$WORK/fio.json" "sum(j['read']['iops']+j['write']['iops'] for j in d['jobs'])/sum((j['usr_cpu']+j['sys_cpu'])/100*int(j['job options'].get('numjobs', 1)) for j in d['jobs'])" ;;
    esac
}

# Whether both last runs read from the page cache: other runs on the machine may drop it
# (drop_caches is machine-wide), which turns a "cached" pair into a disk one. Judged by the
# median latency of a read (cached 4 KiB: ~1 µs; from this disk: tens of µs), because the
# device counters of a shared disk also count everybody else's reads.
last_pair_cached() {
    python3 - "$WORK/fs.json" "$WORK/fio.json" <<'PY'
import json, sys
fs = json.load(open(sys.argv[1]))
run = [p for p in fs['trials'][0]['phases'] if p['name'] == 'run'][0]
fs_ok = run['lat_us']['p50'] < 10
fio = json.load(open(sys.argv[2]))
fio_ok = all(j['read']['clat_ns']['percentile']['50.000000'] < 10000 for j in fio['jobs'])
sys.exit(0 if fs_ok and fio_ok else 1)
PY
}

# The load average and the CPU pressure (share of time runnable tasks waited for a CPU):
# the machine may be shared, and each case is bracketed by these figures.
loadinfo() {
    local p
    p=$(awk '/^some/ { sub("avg10=", "", $2); sub("avg60=", "", $3); print $2 "/" $3 }' /proc/pressure/cpu 2>/dev/null || echo "?")
    echo "load $(cut -d' ' -f1-3 /proc/loadavg), cpu pressure avg10/avg60 $p %"
}

median() { python3 -c 'import statistics,sys; print("%.3f" % statistics.median(map(float, sys.argv[1:])))' "$@"; }

ROWS=()
# case NAME UNIT "fsarena command" "peer command" [invert]
run_case() {
    local name=$1 unit=$2 a=$3 b=$4 invert=${5:-}
    local ratios=() av=() bv=()
    [[ -z "$ONLY" || "$name" =~ $ONLY ]] || return 0
    CASE=$name
    local before
    before="$(date -u +%H:%M:%S) $(loadinfo)"
    echo "$name: $before" >&2
    for i in $(seq "$PAIRS"); do
        local x y try
        for try in 1 2 3 4 5; do
            # Who goes first alternates (A B, then B A): a run that disturbs the next
            # one (write-back, a journal commit, a freed file) does not always hit one side.
            if (( i % 2 )); then
                x=$(eval "$a"); y=$(eval "$b")
            else
                y=$(eval "$b"); x=$(eval "$a")
            fi
            [[ "$name" == *cached* ]] || break
            last_pair_cached && break
            echo "  $name pair $i: read from disk (page cache dropped by someone), again" >&2
        done
        av+=("$x"); bv+=("$y")
        if [ -n "$invert" ]; then
            ratios+=("$(python3 -c "print($y/$x)")")
        else
            ratios+=("$(python3 -c "print($x/$y)")")
        fi
        echo "  $name pair $i: fsarena $x, peer $y $unit" >&2
    done
    ROWS+=("$(printf '%-44s %12s %12s %8s   [%s]' "$name" "$(median "${av[@]}")" "$(median "${bv[@]}")" "$(median "${ratios[@]}")" "$(echo "${ratios[@]}" | xargs printf '%.2f ')")")
    ROWS+=("    before: $before; after: $(date -u +%H:%M:%S) $(loadinfo)")
}

R=$RUNTIME
ONLY=${ONLY:-}   # a regular expression: run only the cases whose name matches
FIO_COMMON="--norandommap --randrepeat=0 --time_based --runtime=$R"

run_case "null 4KiB, ops/s (fio ioengine=null)" ops/s \
    "fsarena_run engine=null,rw=read,size=1GiB,runtime=$R $WORK/dir ops_per_s" \
    "fio_run iops --name=null --ioengine=null --rw=read --bs=4k --size=1g $FIO_COMMON"

run_case "null randread 4KiB, fio's random map, ops/s" ops/s \
    "fsarena_run engine=null,rw=randread,randommap=true,size=1GiB,runtime=$R $WORK/dir ops_per_s" \
    "fio_run iops --name=nullmap --ioengine=null --rw=randread --bs=4k --size=1g --randrepeat=0 --time_based --runtime=$R"

run_case "psync randread 4KiB cached, 1 job, IOPS" IOPS \
    "fsarena_run engine=psync,rw=randread,size=256MiB,runtime=$R $C ops_per_s" \
    "fio_run iops --name=rr --directory=$C --ioengine=psync --rw=randread --bs=4k --size=256m --pre_read=1 $FIO_COMMON"

run_case "psync randread 4KiB cached, 2 jobs, IOPS" IOPS \
    "fsarena_run engine=psync,rw=randread,size=256MiB,numjobs=2,runtime=$R $C ops_per_s" \
    "fio_run iops --name=rr2 --directory=$C --ioengine=psync --rw=randread --bs=4k --size=256m --numjobs=2 --pre_read=1 $FIO_COMMON"

# On a machine shared with other work the job threads get a varying share of the CPUs;
# operations per CPU-second compare the cost per operation whatever that share.
# Large cached files: the gap to the floor grew with the file (page-cache and TLB misses
# per operation). Each job its own 1 GiB file in both tools.
run_case "psync randread 4KiB cached 1GiB, 1 job, IOPS" IOPS \
    "fsarena_run engine=psync,rw=randread,size=1GiB,runtime=$R $C ops_per_s" \
    "fio_run iops --name=rr1g --directory=$C --ioengine=psync --rw=randread --bs=4k --size=1g --pre_read=1 $FIO_COMMON"

run_case "psync randread 4KiB cached 1GiB, 2 jobs, IOPS" IOPS \
    "fsarena_run engine=psync,rw=randread,size=1GiB,numjobs=2,runtime=$R $C ops_per_s" \
    "fio_run iops --name=rr1g2 --directory=$C --ioengine=psync --rw=randread --bs=4k --size=1g --numjobs=2 --pre_read=1 $FIO_COMMON"
rm -f "$C"/rr1g.* "$C"/rr1g2.*

run_case "psync randread 4KiB cached, 2 jobs, ops per CPU-second" ops/cpu-s \
    "fsarena_run engine=psync,rw=randread,size=256MiB,numjobs=2,runtime=$R $C ops_per_cpu_s" \
    "fio_run iops_per_cpu --name=rr2 --directory=$C --ioengine=psync --rw=randread --bs=4k --size=256m --numjobs=2 --pre_read=1 $FIO_COMMON"

run_case "null 4KiB, ops per CPU-second" ops/cpu-s \
    "fsarena_run engine=null,rw=read,size=1GiB,runtime=$R $WORK/dir ops_per_cpu_s" \
    "fio_run iops_per_cpu --name=null --ioengine=null --rw=read --bs=4k --size=1g $FIO_COMMON"

run_case "psync randread 4KiB cached, 1 job, ops per CPU-second" ops/cpu-s \
    "fsarena_run engine=psync,rw=randread,size=256MiB,runtime=$R $C ops_per_cpu_s" \
    "fio_run iops_per_cpu --name=rr --directory=$C --ioengine=psync --rw=randread --bs=4k --size=256m --pre_read=1 $FIO_COMMON"

run_case "io_uring randread 4KiB direct qd32, ext4 loop, IOPS" IOPS \
    "fsarena_run engine=io_uring,rw=randread,direct=true,iodepth=32,size=1GiB,runtime=$R $WORK/mnt ops_per_s" \
    "fio_run iops --name=ur --directory=$WORK/mnt --ioengine=io_uring --rw=randread --direct=1 --iodepth=32 --bs=4k --size=1g $FIO_COMMON"

# Both count the final fsync: fio's write runtime runs from its first write to the end of
# its end_fsync (fio 3.33, checked with strace -ttt -T: first pwrite to the end of the fsync
# = the runtime fio reports), fsarena's run phase ends after its end_fsync too. Both
# preallocate the file before the clock starts: fio by default (fallocate=native),
# fsarena with fallocate=native (its default is none: the run allocates as it writes).
# Each tool's file is deleted right after its run (fsarena deletes its own): on a VM whose
# host takes back the memory a guest leaves free, writing into page-cache pages freed
# seconds ago costs up to twice as much as into pages freed a moment ago (512 MiB on tmpfs
# after 0, 3 and 10 s: 218-287, 292-326, 409-520 ms), and when fio's file was deleted just
# before fio's own run, fsarena right after fio wrote into memory freed two runs earlier
# at a third of its rate (the slow runs' time was in the copy into the new pages).
run_case "psync seq write 1MiB end_fsync, ext4 loop, MB/s" MB/s \
    "fsarena_run engine=psync,rw=write,bs=1MiB,size=512MiB,end_fsync=true,fallocate=native $WORK/mnt mb_per_s" \
    "fio_run mbps --name=sw --directory=$WORK/mnt --ioengine=psync --rw=write --bs=1m --size=512m --end_fsync=1; rm -f $WORK/mnt/sw.0.0"
rm -f "$WORK/mnt/sw.0.0"

# The same over a file written in full before the clock starts: fio's overwrite=1 writes its
# file when it lays it out (and keeps it for the next run, already written), fsarena's
# overwrite=true writes a new one in its layout phase for every run.
run_case "psync seq overwrite 1MiB end_fsync, ext4 loop, MB/s" MB/s \
    "fsarena_run engine=psync,rw=write,bs=1MiB,size=512MiB,end_fsync=true,overwrite=true $WORK/mnt mb_per_s" \
    "fio_run mbps --name=ow --directory=$WORK/mnt --ioengine=psync --rw=write --bs=1m --size=512m --end_fsync=1 --overwrite=1"
rm -f "$WORK/mnt/ow.0.0"

# The floor: a C loop of pread on a cached 256 MiB file vs fsarena psync randread, ns/op.
# The file is written with 1 MiB writes, as fsarena's layout writes its file (the size of
# the page-cache folios, and so the cost of a cached pread, depends on how it was written),
# and written anew before every C run, as fsarena lays out a new file for every run, so
# that both sides read files made the same way (one file kept for every C run would
# compare each fsarena file against that one's placement in memory).
cc -O2 -o "$WORK/pread_floor" bench/pread_floor.c
OPS=$((R * 1000000))
floor_run() { # FIELD [MiB]: the pread_floor output field to print (2: ns/op, 6: CPU ns/op)
    rm -f "$C/floor.dat"
    dd if=/dev/urandom of="$C/floor.dat" bs=1M count="${2:-256}" status=none
    "$WORK/pread_floor" "$C/floor.dat" 4096 "$OPS" | awk -v f="$1" '{print $f}'
}
run_case "C pread floor vs psync randread, ns/op (floor/fsarena)" ns/op \
    "python3 -c \"print(1e9/\$(fsarena_run engine=psync,rw=randread,size=256MiB,runtime=$R $C ops_per_s))\"" \
    "floor_run 2" invert
run_case "C pread floor vs psync randread, CPU ns/op (floor/fsarena)" cpu-ns/op \
    "python3 -c \"print(1e9/\$(fsarena_run engine=psync,rw=randread,size=256MiB,runtime=$R $C ops_per_cpu_s))\"" \
    "floor_run 6" invert
run_case "C pread floor vs psync randread 1GiB, ns/op (floor/fsarena)" ns/op \
    "python3 -c \"print(1e9/\$(fsarena_run engine=psync,rw=randread,size=1GiB,runtime=$R $C ops_per_s))\"" \
    "floor_run 2 1024" invert
run_case "C pread floor vs psync randread 1GiB, CPU ns/op (floor/fsarena)" cpu-ns/op \
    "python3 -c \"print(1e9/\$(fsarena_run engine=psync,rw=randread,size=1GiB,runtime=$R $C ops_per_cpu_s))\"" \
    "floor_run 6 1024" invert

echo
echo "fsarena vs peers, $(date -u +%F), $(nproc) CPUs, $(uname -r), median of $PAIRS pairs (the pairs' ratios in brackets)"
printf '%-44s %12s %12s %8s\n' case fsarena peer ratio
printf '%s\n' "${ROWS[@]}"

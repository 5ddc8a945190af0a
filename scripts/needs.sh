#!/usr/bin/env bash
# Prints, one per line, the Debian packages the test suite needs that are missing under the
# root directory $1 (default /). scripts/test.sh installs what this prints; tests/scripts.rs
# runs it against fake roots.
#
# Each package is judged by the exact file it ships and the suite uses, never by a glob
# that a neighbour package also matches: libclang-cpp.so.14 (pulled in by other LLVM
# packages) is not the libclang that bindgen loads, and libclang1-14's libclang.so.1 comes
# without the headers bindgen needs; libclang-dev's unversioned libclang.so is the proof.
set -euo pipefail
root=${1:-/}
root=${root%/}

# A program, in the directories root's PATH and cron's PATH cover.
has_program() {
  local d
  for d in usr/local/sbin usr/local/bin usr/sbin usr/bin sbin bin; do
    [ -x "$root/$d/$1" ] && [ -f "$root/$d/$1" ] && return 0
  done
  return 1
}

# libclang for bindgen (under the mpi crate): the development link libclang.so or
# libclang-N.so, in LLVM's own directory or the multiarch one.
has_libclang() {
  local f
  for f in "$root"/usr/lib/llvm-*/lib/libclang.so "$root"/usr/lib/llvm-*/lib/libclang-[0-9]*.so \
           "$root"/usr/lib/*-linux-gnu/libclang.so "$root"/usr/lib/*-linux-gnu/libclang-[0-9]*.so; do
    case "$f" in *'*'*) continue ;; esac
    [ -e "$f" ] && return 0
  done
  return 1
}

# program:package. bon_csv2html (bonnie++) reads our Bonnie++ CSV in its test; headless
# chromium renders the HTML report; ntfs-3g is the FUSE filesystem tested end to end; sshfs
# and sshd stand in for a network filesystem (tests/morefs.rs); OpenMPI builds and runs the
# `mpi` feature (tests/mpi.rs; tests/mpi_hosts.rs also needs ip, nsenter and unshare);
# strace shows that each stderr line is one write
# (tests/stderr_lines.rs); python3-fuse runs tests/fuse/nolock.py, a FUSE filesystem whose
# locks fail, under a result database (tests/database_faults.rs). The guest run
# (tests/guest.rs) boots a Debian kernel under QEMU with virtme-ng (installed by
# scripts/test.sh with pip into /opt/vng, from python3-venv) and its static busybox, and
# makes the filesystems this host's kernel lacks in it; the guest serves NFS and SMB
# itself with this machine's nfs-kernel-server, rpcbind, nfs-common, samba and cifs-utils
# (scripts/test.sh keeps their services off on the host). fio runs the job files of
# tests/fio.rs beside fsarena, and its fio_jsonplus_clat2csv (which imports python3-six)
# reads fsarena's fio JSON (tests/fio_json.rs). RocksDB's db_bench (rocksdb-tools) runs
# the db_bench workload. eatmydata (libeatmydata's LD_PRELOAD) makes fsync a no-op for the
# crash workload's negative control (tests/crash.rs).
for pair in mkfs.ext4:e2fsprogs mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs losetup:mount \
            bon_csv2html:bonnie++ chromium:chromium mkntfs:ntfs-3g sshfs:sshfs \
            sshd:openssh-server mpirun:openmpi-bin mpicc:libopenmpi-dev strace:strace \
            qemu-system-x86_64:qemu-system-x86 busybox:busybox-static mkfs.jfs:jfsutils \
            mkfs.vfat:dosfstools mkfs.reiserfs:reiserfsprogs mkfs.f2fs:f2fs-tools \
            mkfs.nilfs2:nilfs-tools mkfs.exfat:exfatprogs ip:iproute2 nsenter:util-linux \
            exportfs:nfs-kernel-server rpcbind:rpcbind mount.nfs:nfs-common smbd:samba \
            mount.cifs:cifs-utils fio:fio db_bench:rocksdb-tools eatmydata:eatmydata; do
  has_program "${pair%%:*}" || echo "${pair##*:}"
done
has_libclang || echo libclang-dev
[ -f "$root/usr/lib/python3/dist-packages/fuse.py" ] || echo python3-fuse
[ -f "$root/usr/lib/python3/dist-packages/six.py" ] || echo python3-six
# python3 -m venv needs ensurepip, which python3.X-venv ships.
ls "$root"/usr/lib/python3.*/ensurepip/__init__.py >/dev/null 2>&1 || echo python3-venv
# PostgreSQL's server for the pgbench workload (tests/databases.rs): Debian keeps it off
# the PATH, in /usr/lib/postgresql/VERSION/bin, with initdb, pg_ctl and pgbench.
ls "$root"/usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || has_program postgres || echo postgresql
# A guest kernel with its modules: Debian's default kernel.
ls "$root"/boot/vmlinuz-*-amd64 >/dev/null 2>&1 || echo linux-image-amd64

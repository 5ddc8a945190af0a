#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs when missing (as root, with
# apt-get), then format check, clippy with warnings as errors, and every test.
# Tests that need root or loop devices run when they are available and print SKIP otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# What is missing, judged by the exact files each package ships (scripts/needs.sh).
mapfile -t need < <(bash scripts/needs.sh /)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq -o DPkg::Lock::Timeout=600
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${need[@]}"
    # The NFS and SMB servers are for the guest of tests/guest.rs: on a host run by systemd
    # their packages start them listening on every interface; stop and disable them again.
    servers=()
    for p in "${need[@]}"; do
      case "$p" in
        samba) servers+=(smbd nmbd samba-ad-dc) ;;
        nfs-kernel-server) servers+=(nfs-server) ;;
        rpcbind) servers+=(rpcbind.socket rpcbind) ;;
      esac
    done
    if [ ${#servers[@]} -gt 0 ] && [ -d /run/systemd/system ]; then
      echo "test.sh: ${servers[*]} were installed for the guest: disabling them on this host"
      systemctl disable --now "${servers[@]}" || true
    fi
  else
    echo "test.sh: missing ${need[*]} (not root or no apt-get): tests on those filesystems will be skipped"
  fi
fi

# virtme-ng boots the guest kernel of tests/guest.rs; it is on PyPI only.
if [ "$(id -u)" = 0 ] && [ ! -x /opt/vng/bin/vng ] && command -v python3 >/dev/null 2>&1; then
  echo "test.sh: installing virtme-ng into /opt/vng"
  python3 -m venv /opt/vng && /opt/vng/bin/pip install -q virtme-ng ||
    echo "test.sh: virtme-ng could not be installed: the guest test will be skipped"
fi

cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# --show-output: the test harness hides what a passing test prints, and a test that
# cannot run here passes after printing SKIP; those lines are gathered at the end.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --locked -- --show-output 2>&1 | tee "$log"
# The MPI build: its own lint, and the tests that run ranks under mpirun, on this host and
# on emulated hosts (network namespaces; the rest of the suite is the same code with or
# without the feature).
if ! bash scripts/needs.sh / | grep -qx 'libopenmpi-dev\|openmpi-bin\|libclang-dev'; then
  cargo clippy --all-targets --locked --features mpi -- -D warnings
  cargo test --locked --features mpi --test mpi --test mpi_hosts -- --show-output 2>&1 | tee -a "$log"
else
  echo "test.sh: SKIP the mpi feature: missing $(bash scripts/needs.sh / | grep -x 'libopenmpi-dev\|openmpi-bin\|libclang-dev' | xargs) (Debian packages)"
fi
echo "test.sh: tests that skipped (SKIP lines they printed):"
grep -h 'SKIP' "$log" | sort | uniq -c || echo "  none"

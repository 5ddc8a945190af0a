#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs when missing (as root, with
# apt-get), then format check, clippy with warnings as errors, and every test.
# Tests that need root or loop devices run when they are available and print SKIP otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# The suite runs from a checkout whose path is at least 120 characters long, so that a test
# asserting on a line that a long path wraps fails here, not first on a user's machine. A
# shorter checkout is copied (the files git tracks or would track, as they are now) under a
# long temporary path and the suite runs there, building into this checkout's target/.
# FSARENA_TEST_HERE=1 runs it in place.
min_path=120
if [ "${#PWD}" -lt "$min_path" ] && [ -z "${FSARENA_TEST_HERE:-}" ]; then
  top=$PWD
  long=$(mktemp -d "${TMPDIR:-/tmp}/fsarena-test.XXXXXX")
  trap 'rm -rf "$long"' EXIT
  chmod 755 "$long" # the tests that run fsarena as nobody read examples/ there
  dir=$long
  while [ "${#dir}" -lt "$min_path" ]; do dir="$dir/a-checkout-path-long-enough-to-wrap-lines"; done
  mkdir -p "$dir"
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$dir"
  echo "test.sh: running the suite from a copy under a ${#dir}-character path: $dir"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/target}"
  rc=0
  FSARENA_TEST_HERE=1 bash "$dir/scripts/test.sh" || rc=$?
  exit "$rc"
fi

# What is missing, judged by the exact files each package ships (scripts/needs.sh).
mapfile -t need < <(bash scripts/needs.sh /)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq -o DPkg::Lock::Timeout=600
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${need[@]}"
    # The NFS and SMB servers are for the guest of tests/guest.rs, PostgreSQL for the
    # pgbench workload (which starts its own server): on a host run by systemd their
    # packages start them listening; stop and disable them again.
    servers=()
    for p in "${need[@]}"; do
      case "$p" in
        samba) servers+=(smbd nmbd samba-ad-dc) ;;
        nfs-kernel-server) servers+=(nfs-server) ;;
        rpcbind) servers+=(rpcbind.socket rpcbind) ;;
        postgresql) servers+=(postgresql) ;;
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

# A Debian 6.1 kernel from before Linux 6.1.191, whose btrfs still has the fsync bug that
# fstests' generic/789 shows: tests/guest.rs finds it with a generated crash workload.
old_kernel=
for k in /boot/vmlinuz-6.1.0-*-amd64; do
  n=${k#/boot/vmlinuz-6.1.0-}
  n=${n%-amd64}
  case "$n" in '' | *[!0-9]*) continue ;; esac
  [ "$n" -le 54 ] && old_kernel=$k
done
if [ "$(id -u)" = 0 ] && [ -z "$old_kernel" ] && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing linux-image-6.1.0-54-amd64-unsigned (Linux 6.1.190, for tests/guest.rs)"
  apt-get update -qq -o DPkg::Lock::Timeout=600 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    linux-image-6.1.0-54-amd64-unsigned ||
    echo "test.sh: it could not be installed: the old-kernel crash test will be skipped"
fi

# The crash workload traces its recorder's loop device (the pessimistic log) through the
# kernel's tracing filesystem, which a machine without systemd may not have mounted.
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && [ ! -d /sys/kernel/tracing/instances ]; then
  mount -t tracefs nodev /sys/kernel/tracing &&
    echo "test.sh: mounted the tracing filesystem on /sys/kernel/tracing (for tests/crash.rs)"
fi

cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# --show-output: the test harness hides what a passing test prints, and a test that
# cannot run here passes after printing SKIP; those lines are gathered at the end.
# --no-fail-fast: every test binary runs even after one fails, and the end says what failed.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
cargo test --locked --no-fail-fast -- --show-output 2>&1 | tee "$log" || rc=1
# The MPI build: its own lint, and the tests that run ranks under mpirun, on this host and
# on emulated hosts (network namespaces; the rest of the suite is the same code with or
# without the feature).
if ! bash scripts/needs.sh / | grep -qx 'libopenmpi-dev\|openmpi-bin\|libclang-dev'; then
  cargo clippy --all-targets --locked --features mpi -- -D warnings || rc=1
  cargo test --locked --no-fail-fast --features mpi --test mpi --test mpi_hosts -- --show-output 2>&1 |
    tee -a "$log" || rc=1
else
  echo "test.sh: SKIP the mpi feature: missing $(bash scripts/needs.sh / | grep -x 'libopenmpi-dev\|openmpi-bin\|libclang-dev' | xargs) (Debian packages)"
fi
echo "test.sh: tests that skipped (SKIP lines they printed):"
grep -h 'SKIP' "$log" | sort | uniq -c || echo "  none"
# The harness prints a failed test as `test NAME ... FAILED`; a binary that did not build or
# crashed shows only in cargo's own `error:` lines.
failed=$(grep -E '^test .* \.\.\. FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' || true)
if [ -n "$failed" ]; then
  echo "test.sh: tests that failed:"
  printf '  %s\n' $failed
fi
grep -E '^error: ' "$log" | sort -u || true
passed=$(grep -Eo '^test result: [A-Za-z]+\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
nfailed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s += $1} END {print s + 0}')
if [ "$rc" != 0 ] && [ "$nfailed" = 0 ]; then
  echo "test.sh: a build or lint step failed (its error: lines are above)"
  nfailed=1
fi
echo "test.sh: $passed passed, $nfailed failed"
exit "$rc"

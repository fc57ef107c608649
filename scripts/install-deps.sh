#!/usr/bin/env bash
# Installs (with apt-get) whatever Spade's build and tests need that this Debian machine lacks.
# Silent when nothing is missing; otherwise it names the missing packages and shows apt's progress,
# all on stderr. When another package manager holds the apt/dpkg lock (unattended-upgrades, a
# second apt), it waits up to SPADE_APT_LOCK_WAIT seconds (default 600) for it, then fails naming
# the lock.
set -euo pipefail

packages=(cmake ninja-build g++ libeigen3-dev libboost-dev doctest-dev zlib1g-dev python3)
# Checks that CI also runs: formatting and the parser fuzzer (clang with its sanitizer runtime).
if [[ "${SPADE_CHECK_DEPS:-0}" == 1 ]]; then
  packages+=(clang clang-format libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive

lock_wait=${SPADE_APT_LOCK_WAIT:-600}
[[ $lock_wait =~ ^[0-9]+$ ]] || { echo "install-deps: SPADE_APT_LOCK_WAIT must be a number of seconds, not '$lock_wait'" >&2; exit 1; }
deadline=$((SECONDS + lock_wait))
# apt-get waits for the dpkg locks itself (DPkg::Lock::Timeout) but not for the lists lock of
# 'apt-get update' or the download lock, so holders of any of them are waited for here.
locks=(/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock)

# Prints "LOCK (held by NAME, pid PID)" for the first held lock, or nothing; needs fuser (psmisc).
lock_holder() {
  command -v fuser >/dev/null || return 0
  local lock pid
  for lock in "${locks[@]}"; do
    [[ -e $lock ]] || continue
    pid=$($sudo fuser "$lock" 2>/dev/null | awk '{gsub(/[^0-9]/, "", $1); print $1; exit}') || true
    if [[ -n $pid ]]; then
      echo "$lock (held by $(ps -o comm= -p "$pid" 2>/dev/null || echo '?'), pid $pid)"
      return 0
    fi
  done
}

# Waits until no apt/dpkg lock is held, or fails when SPADE_APT_LOCK_WAIT runs out.
wait_for_locks() {
  local holder told=""
  while holder=$(lock_holder) && [[ -n $holder ]]; do
    if ((SECONDS >= deadline)); then
      echo "install-deps: gave up after ${lock_wait} s waiting for the apt/dpkg lock $holder;" \
        "let it finish or set SPADE_APT_LOCK_WAIT" >&2
      exit 1
    fi
    if [[ -z $told ]]; then
      echo "install-deps: waiting for the apt/dpkg lock $holder (up to $((deadline - SECONDS)) s)..." >&2
      told=1
    fi
    sleep 2
  done
}

# Runs apt-get with its output on stderr; retries while it fails only because a lock is held
# (fuser missing, or another process took the lock first), until SPADE_APT_LOCK_WAIT runs out.
# apt's own lock errors are not repeated on each try; the last one is quoted when it gives up.
apt_get() {
  local errors rc told=""
  errors=$(mktemp)
  while true; do
    wait_for_locks
    rc=0
    { $sudo apt-get -q -o Dpkg::Progress-Fancy=0 -o Dpkg::Use-Pty=0 \
        -o DPkg::Lock::Timeout=$((deadline > SECONDS ? deadline - SECONDS : 0)) "$@" 2>&1 1>&3 |
        tee "$errors" | { grep -Ev '^E: (Could not get lock|Unable to (lock|acquire))' || true; } >&2; } 3>&2 ||
      rc=$?
    if ((rc == 0)) || ! grep -q "Could not get lock" "$errors"; then
      rm -f "$errors"
      ((rc == 0)) || echo "install-deps: apt-get $1 failed (exit $rc)" >&2
      return "$rc"
    fi
    if ((SECONDS >= deadline)); then
      echo "install-deps: gave up after ${lock_wait} s waiting for the apt/dpkg lock" \
        "$(sed -n 's/^E: Could not get lock //p' "$errors" | head -n 1);" \
        "let it finish or set SPADE_APT_LOCK_WAIT" >&2
      rm -f "$errors"
      return "$rc"
    fi
    if [[ -z $told ]]; then
      echo "install-deps: waiting for the apt/dpkg lock (up to $((deadline - SECONDS)) s)..." >&2
      told=1
    fi
    sleep 5
  done
}

command -v fuser >/dev/null ||
  echo "install-deps: waiting up to ${lock_wait} s for the apt/dpkg lock if another package manager holds it" >&2
echo "install-deps: apt-get update" >&2
apt_get update
echo "install-deps: apt-get install ${missing[*]}" >&2
apt_get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}" >&2

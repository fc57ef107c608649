#!/usr/bin/env bash
# Installs (with apt-get) whatever Spade's build and tests need that this Debian machine lacks.
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

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

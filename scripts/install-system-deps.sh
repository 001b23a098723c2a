#!/usr/bin/env bash
# Install the Debian/Ubuntu packages StorWatt's `make run`, `make test` and `.ci/run` need.
#
# Why a script of its own: a fresh clone must pass `make test` by itself, and PySide6's wheel
# brings Qt but not the X11/xcb libraries its platform plugin links against (without
# libxcb-cursor0 Qt aborts before the first window). The Makefile and CI call this one script
# so the list lives in one place.
#
# Behaviour:
#   * every package already installed (or provided by an installed package): prints nothing,
#     runs no apt-get, exits 0 — one dpkg-query call, so it is cheap on every `make`;
#   * otherwise, as root: apt-get update + apt-get install of the missing ones;
#     not root but `sudo -n` works (no password prompt): the same through sudo;
#     neither: one line with the exact command to run, exit 1;
#   * not Debian/Ubuntu (no dpkg-query/apt-get): says what to install by hand, exits 0 so a
#     machine that has the libraries anyway can go on.
#
# Usage: scripts/install-system-deps.sh [--dry-run | --list]
#   --dry-run  print the apt-get commands instead of running them
#   --list     print the package list, one per line
set -euo pipefail

PACKAGES=(
  # create the project's .venv and drive the set-up
  python3-venv make
  # the workload engine (local-fio lab, fio tests)
  fio
  # Qt 6 (PySide6): what its xcb platform plugin, OpenGL and fonts link against; PySide6's
  # wheel bundles Qt itself but not these system libraries
  libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3 libfontconfig1 libfreetype6
  libglib2.0-0 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0
  libxcb-xinerama0 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-image0 libxcb-shm0
  libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libxcb-glx0
  # a virtual display for GUI tests and screenshots; poppler renders report pages to images
  xvfb xauth x11-utils poppler-utils
  # the lab-wide database tests start a throw-away PostgreSQL server
  postgresql
  # packaging: PyInstaller needs objdump; dpkg-deb builds and unpacks the .deb
  binutils dpkg
)

dry_run=0
case "${1:-}" in
  "") ;;
  --dry-run) dry_run=1 ;;
  --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
  *) echo "usage: $0 [--dry-run | --list]" >&2; exit 2 ;;
esac

say() { echo "install-system-deps: $*" >&2; }

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  say "not a Debian/Ubuntu system (no dpkg-query/apt-get); make sure your distribution's" \
      "equivalents of these are installed: ${PACKAGES[*]}"
  exit 0
fi

# Names of installed packages and of what they provide (Ubuntu 24.04's libglib2.0-0t64
# provides libglib2.0-0), one per line.
installed_names() {
  dpkg-query -W -f='${db:Status-Abbrev}|${Package}|${Provides}\n' 2>/dev/null |
    awk -F'|' '$1 ~ /^ii/ {
      print $2
      gsub(/\([^)]*\)/, "", $3); n = split($3, provided, /[ ,]+/)
      for (i = 1; i <= n; i++) if (provided[i] != "") print provided[i]
    }'
}

declare -A present=()
while IFS= read -r name; do present["$name"]=1; done < <(installed_names)
missing=()
for p in "${PACKAGES[@]}"; do
  [ -n "${present[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  say "missing system packages; run:  sudo apt-get install -y ${missing[*]}"
  exit 1
fi

run() {
  if [ "$dry_run" -eq 1 ]; then echo "would run: $*"; else "$@"; fi
}
say "installing ${missing[*]}"
run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

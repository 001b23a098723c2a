#!/usr/bin/env bash
# Build the Linux deliverables into $DIST (default dist/):
#   dist/storwatt/                          one-folder PyInstaller bundle
#   dist/storwatt_<ver>_<arch>.deb          installs /opt/storwatt, /usr/bin/storwatt,
#                                           /usr/bin/storwatt-verify (issue 37), menu entry
#   dist/storwatt-<ver>-linux-<arch>.tar.gz the bundle for PCs without dpkg (unpack and run)
#
# Usage: packaging/linux/build.sh [--skip-bundle]
#   PY     python with the 'package' extra installed (default .venv/bin/python)
#   DIST   output folder (default dist);  WORK  PyInstaller's work folder (default build/pyinstaller)
#   GZIP_LEVEL  gzip level of the .deb and the .tar.gz (default 6; the packaging test uses 1:
#               the same files, ~9 % larger, packed in a third of the CPU)
#   --skip-bundle reuses an existing $DIST/storwatt (e.g. to re-pack after editing this script).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
DIST="$(mkdir -p "${DIST:-$ROOT/dist}" && cd "${DIST:-$ROOT/dist}" && pwd)"
WORK="${WORK:-$ROOT/build/pyinstaller}"
HERE="$ROOT/packaging/linux"
GZIP_LEVEL="${GZIP_LEVEL:-6}"
case "$GZIP_LEVEL" in [1-9]) ;; *) echo "build.sh: GZIP_LEVEL must be 1-9, not '$GZIP_LEVEL'" >&2; exit 1;; esac

die() { echo "build.sh: $*" >&2; exit 1; }

for tool in dpkg-deb dpkg objdump tar; do
  command -v "$tool" >/dev/null || die "'$tool' is missing; install: apt-get install binutils dpkg-dev tar"
done
"$PY" -c "import PyInstaller" 2>/dev/null \
  || die "PyInstaller is not installed for $PY; run: $PY -m pip install -e '.[package]'"

VERSION="$("$PY" "$ROOT/packaging/version_info.py" plain)"
DEB_VERSION="$("$PY" "$ROOT/packaging/version_info.py" deb)"
ARCH="$(dpkg --print-architecture)"
BUNDLE="$DIST/storwatt"

if [ "${1:-}" != "--skip-bundle" ]; then
  echo "==> PyInstaller bundle -> $BUNDLE"
  (cd "$ROOT" && "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
      --distpath "$DIST" --workpath "$WORK" packaging/storwatt.spec)
fi
[ -x "$BUNDLE/storwatt" ] || die "no bundle at $BUNDLE (run without --skip-bundle)"
# the auditor's verifier ships with the station (issue 37): its launcher and its readable source
[ -x "$BUNDLE/storwatt-verify" ] && [ -f "$BUNDLE/_internal/verifier/storwatt_verify.py" ] \
  || die "the bundle at $BUNDLE lacks storwatt-verify or its source (packaging/storwatt.spec)"

echo "==> .tar.gz and .deb"
STAGE="$(mktemp -d "$DIST/.deb-root.XXXXXX")"  # same file system: hard links, no copy
trap 'rm -rf "$STAGE"' EXIT
chmod 755 "$STAGE"  # mktemp makes it 0700; it becomes / of the package
install -d "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" \
  "$STAGE/usr/share/icons/hicolor/256x256/apps" "$STAGE/usr/share/icons/hicolor/scalable/apps" \
  "$STAGE/usr/share/doc/storwatt"
cp -al "$BUNDLE" "$STAGE/opt/storwatt"
# Relative link: the frozen launcher finds its _internal/ through /proc/self/exe, and the same
# tree works unpacked anywhere (dpkg -x in the packaging test) as well as installed in /.
ln -s ../../opt/storwatt/storwatt "$STAGE/usr/bin/storwatt"
ln -s ../../opt/storwatt/storwatt-verify "$STAGE/usr/bin/storwatt-verify"
install -m 644 "$HERE/storwatt.desktop" "$STAGE/usr/share/applications/storwatt.desktop"
install -m 644 "$ROOT/resources/icons/storwatt.png" "$STAGE/usr/share/icons/hicolor/256x256/apps/"
install -m 644 "$ROOT/resources/icons/storwatt.svg" "$STAGE/usr/share/icons/hicolor/scalable/apps/"
printf 'StorWatt %s\nLicense: Proprietary\n' "$VERSION" > "$STAGE/usr/share/doc/storwatt/copyright"

# The tarball compresses on the second core while the .deb is compressed. Started only after
# the hard links above exist: linking changes the files' ctime, which tar reports as an error.
TARBALL="$DIST/storwatt-${VERSION}-linux-${ARCH}.tar.gz"
tar -C "$DIST" --owner=0 --group=0 -cf - storwatt | gzip "-$GZIP_LEVEL" > "$TARBALL" &
TAR_PID=$!

# The bundle's Python and Qt libraries were linked on this machine: its glibc is the floor.
GLIBC="$(getconf GNU_LIBC_VERSION | awk '{print $2}')"
INSTALLED_KB="$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)"
sed -e "s/@VERSION@/$DEB_VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@INSTALLED_KB@/$INSTALLED_KB/" \
  -e "s/@GLIBC@/$GLIBC/" \
  "$HERE/control.in" > "$STAGE/DEBIAN/control"
DEB="$DIST/storwatt_${DEB_VERSION}_${ARCH}.deb"
# gzip: xz would take minutes on a 2-core runner for ~1 % smaller files.
dpkg-deb --root-owner-group -Zgzip "-z$GZIP_LEVEL" --build "$STAGE" "$DEB" >/dev/null
echo "    $DEB"

wait "$TAR_PID" || die "tar failed for $TARBALL"
echo "    $TARBALL"

#!/usr/bin/env bash
# scripts/build-deb.sh - build the postgresql-15-snowflake Debian package from
# this tree, with pg_buildext (see debian/).
#
# usage: scripts/build-deb.sh [OUTDIR]
#
# Installs the build dependencies that are missing (debhelper,
# postgresql-server-dev-all, dpkg-dev; as root or through sudo), checks that
# the version agrees everywhere (scripts/check-version.sh), copies the tree
# without .git and build leftovers into a temporary directory, runs
# `dpkg-buildpackage -us -uc -b` there, and moves the .deb into OUTDIR
# (default /tmp/snowflake-deb). The last line printed is the .deb's path.
# Touches nothing outside the copy and OUTDIR, so it needs no test lock.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUTDIR=${1:-/tmp/snowflake-deb}

# Everything but the package's path goes to stderr: callers capture stdout.
install_packages "${DEB_PACKAGES[@]}" >&2

bash "$REPO/scripts/check-version.sh" >&2

WORK=$(mktemp -d /tmp/snowflake-debbuild.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# Leave out compiled objects too: in pg_buildext's VPATH build, make would
# find a stale src/*.o of the source tree through VPATH and link it.
rsync -a --exclude .git --exclude '/tmp_check*' --exclude '/output_*' \
	--exclude /results --exclude /log --exclude '/regression.*' \
	--exclude '*.o' --exclude '*.so' --exclude '*.bc' --exclude '/build-*' \
	--exclude '/debian/postgresql-*' --exclude '/debian/.debhelper' \
	--exclude '/debian/files' --exclude '/debian/*.substvars' \
	--exclude '/debian/debhelper-build-stamp' \
	"$REPO/" "$WORK/snowflake/"

say "Building the package in $WORK/snowflake" >&2
(cd "$WORK/snowflake" && dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 || {
	tail -n 60 "$WORK/build.log" >&2
	echo "error: dpkg-buildpackage failed (last lines above)" >&2
	exit 1
}

version=$(cd "$WORK/snowflake" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb=postgresql-15-snowflake_${version}_${arch}.deb
[ -f "$WORK/$deb" ] || { echo "error: $deb was not built" >&2; ls "$WORK" >&2; exit 1; }
mkdir -p "$OUTDIR"
mv "$WORK/$deb" "$OUTDIR/"
say "Built $OUTDIR/$deb:" >&2
dpkg-deb --contents "$OUTDIR/$deb" | awk '{print "    " $NF}' >&2
echo "$OUTDIR/$deb"

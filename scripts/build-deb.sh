#!/usr/bin/env bash
# scripts/build-deb.sh - build the postgresql-MAJOR-snowflake Debian package
# from this tree, with pg_buildext (see debian/).
#
# usage: [PG_MAJOR=MAJOR] scripts/build-deb.sh [OUTDIR]
#
# MAJOR defaults to the one the host's Debian suite packages (15 on Debian
# 12); scripts/test.sh builds the package for each major in its root.
# Installs the build dependencies that are missing (debhelper,
# postgresql-server-dev-all and -MAJOR, dpkg-dev; as root or through sudo),
# checks that the version agrees everywhere (scripts/check-version.sh),
# copies the tree without .git and build leftovers into a temporary
# directory, writes there the debian/control of MAJOR's package
# (`pg_buildext updatecontrol` from debian/control.in), runs
# `dpkg-buildpackage -us -uc -b` for MAJOR alone, and moves the .deb into
# OUTDIR (default /tmp/snowflake-deb). The last line printed is the .deb's
# path. Touches nothing outside the copy and OUTDIR, so it needs no test lock.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUTDIR=${1:-/tmp/snowflake-deb}
use_major "${PG_MAJOR:-$(host_major)}"
# pg_buildext builds for the "supported" majors: make that this one alone.
export PG_SUPPORTED_VERSIONS=$PG_MAJOR

# Everything but the package's path goes to stderr: callers capture stdout.
# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${DEB_PACKAGES[@]}" postgresql-server-dev-@PG@) >&2

bash "$REPO/scripts/check-version.sh" >&2

WORK=$(mktemp -d /tmp/snowflake-debbuild.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
copy_tree "$REPO" "$WORK/snowflake"

say "Building the package for PostgreSQL $PG_MAJOR in $WORK/snowflake" >&2
(cd "$WORK/snowflake" && pg_buildext updatecontrol && dpkg-buildpackage -us -uc -b) \
	>"$WORK/build.log" 2>&1 || {
	tail -n 60 "$WORK/build.log" >&2
	echo "error: dpkg-buildpackage failed (last lines above)" >&2
	exit 1
}

version=$(cd "$WORK/snowflake" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb=postgresql-${PG_MAJOR}-snowflake_${version}_${arch}.deb
[ -f "$WORK/$deb" ] || { echo "error: $deb was not built" >&2; ls "$WORK" >&2; exit 1; }
mkdir -p "$OUTDIR"
mv "$WORK/$deb" "$OUTDIR/"
say "Built $OUTDIR/$deb:" >&2
dpkg-deb --contents "$OUTDIR/$deb" | awk '{print "    " $NF}' >&2
echo "$OUTDIR/$deb"

#!/usr/bin/env bash
# scripts/build-citus.sh - build Citus from its release tarball for one
# PostgreSQL and install it there, for t/304_citus.pl.
#
# usage: scripts/build-citus.sh TARBALL [PG_CONFIG]
#
# TARBALL is a Citus release source archive (the team keeps Citus 14.0.1 at
# ../shared/vendor/citus-14.0.1.tar.gz beside the repository).  PG_CONFIG is
# the pg_config of the PostgreSQL to build for (default: the pg_config on
# PATH).  Citus is a test dependency only: it is built outside the
# repository and never becomes part of our packages.
#
# The build is cached, one per PostgreSQL major and tarball checksum, as a
# staged install tree (make install DESTDIR=...) in
#     $SNOWFLAKE_CITUS_CACHE/pgMAJOR-CHECKSUM-RECIPE/
# (RECIPE: a checksum of the configure arguments below, so that changing
# them builds anew)
# (default /var/cache/snowflake-test/citus as root, else
# ~/.cache/snowflake-test/citus).  Inside a test root that is the root's own
# /var/cache, so each root builds once; a second run only copies the staged
# tree into the PostgreSQL installation again.
#
# Installs its build dependencies with apt-get when they are missing:
# build-essential, the server headers, libicu-dev, libkrb5-dev (the server
# headers include gssapi.h), liblz4-dev, libzstd-dev, libcurl4-openssl-dev.
# Citus uses libcurl only for its anonymous statistics collection, which is
# off unless a build defines ENABLE_CITUS_STATISTICS_COLLECTION (the
# release's configure does not).  It is built with libcurl all the same:
# Debian builds PostgreSQL 18 with libcurl, so its pg_config.h defines
# HAVE_LIBCURL, and Citus's sources then use curl whatever configure says.
set -euo pipefail
tarball=${1:-}
pg_config=${2:-}
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$tarball" ]; then
	die "usage: scripts/build-citus.sh TARBALL [PG_CONFIG]
  TARBALL: the Citus release source, e.g. ../shared/vendor/citus-14.0.1.tar.gz"
fi

# The tarball: present, readable, a gzipped tar with one top directory that
# has a configure script.
[ -e "$tarball" ] || die "the Citus tarball $tarball does not exist"
if [ ! -f "$tarball" ] || [ ! -r "$tarball" ]; then
	die "the Citus tarball $tarball is not a readable file"
fi
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
top=$(tar -tzf "$tarball" 2>/dev/null | awk -F/ 'NR == 1 { print $1 }') ||
	die "$tarball is not a readable .tar.gz archive (tar -tzf fails)"
configure_ac=$(tar -xzOf "$tarball" "$top/configure.ac" 2>/dev/null) ||
	die "$tarball does not look like a Citus source release: no $top/configure.ac"
version=$(printf '%s\n' "$configure_ac" | sed -n 's/^AC_INIT(\[Citus\], *\[\([^]]*\)\]).*/\1/p')
[ -n "$version" ] || die "$tarball does not look like a Citus source release: no AC_INIT([Citus], ...)"

# The PostgreSQL to build for.
if [ -z "$pg_config" ]; then
	pg_config=$(command -v pg_config) ||
		die "no pg_config on PATH: pass the PostgreSQL's pg_config as the second argument"
fi
[ -x "$pg_config" ] || die "$pg_config is not an executable pg_config"
major=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
[ -n "$major" ] || die "could not read the PostgreSQL major from: $("$pg_config" --version)"

# The majors this Citus release supports, from the check in its configure
# script (elif test "$version_num" != '16' -a ...).  If the check cannot be
# read, configure itself decides.
supported=$(printf '%s\n' "$configure_ac" | grep 'version_num" != ' |
	grep -o "'[0-9][0-9]*'" | tr -d "'" | tr '\n' ' ' | sed 's/ $//') || true
if [ -n "$supported" ] && ! printf ' %s ' "$supported" | grep -q " $major "; then
	die "Citus $version does not support PostgreSQL $major (it supports: $supported)"
fi

# Build dependencies.  The server headers come from Debian's package only
# for Debian's own PostgreSQL.
packages=(build-essential libcurl4-openssl-dev libicu-dev libkrb5-dev liblz4-dev libzstd-dev)
[ "$("$pg_config" --bindir)" != "/usr/lib/postgresql/$major/bin" ] ||
	packages+=("postgresql-server-dev-$major")
install_packages "${packages[@]}"
[ -f "$("$pg_config" --pgxs)" ] ||
	die "PostgreSQL $major's server headers (PGXS) are missing: $("$pg_config" --pgxs)"

if is_root; then
	cache=${SNOWFLAKE_CITUS_CACHE:-/var/cache/snowflake-test/citus}
else
	cache=${SNOWFLAKE_CITUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/snowflake-test/citus}
fi
configure_args=(PG_CONFIG="$pg_config")
checksum=$(sha256sum "$tarball" | cut -c1-16)
recipe=$(printf '%s\n' "${configure_args[@]}" | sha256sum | cut -c1-8)
name=pg$major-$checksum-$recipe
entry=$cache/$name
stage=$entry/stage
pkglibdir=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)

if [ -f "$stage$pkglibdir/citus.so" ]; then
	say "Citus $version for PostgreSQL $major: using the cached build in $entry"
else
	say "Building Citus $version for PostgreSQL $major (the log: $cache/$name.log)"
	mkdir -p "$cache"
	log=$cache/$name.log
	work=$(mktemp -d "$cache/build.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	started=$(date +%s)
	# One && chain: set -e does not apply inside the condition of an if.
	if ! (cd "$work" && tar -xzf "$tarball" && cd "$top" &&
		./configure "${configure_args[@]}" &&
		make -j"$(nproc)" &&
		make install DESTDIR="$work/stage") >"$log" 2>&1; then
		echo "last 40 lines of $log:" >&2
		tail -n 40 "$log" >&2
		die "building Citus $version for PostgreSQL $major failed (the whole log: $log)"
	fi
	if [ ! -f "$work/stage$pkglibdir/citus.so" ] ||
		[ ! -f "$work/stage$sharedir/extension/citus.control" ]; then
		die "the Citus build installed no citus.so into $pkglibdir or no citus.control into $sharedir/extension (the log: $log)"
	fi
	# Only a finished build takes the cache entry's name.
	rm -rf "$entry"
	mkdir "$entry"
	mv "$work/stage" "$stage"
	mv "$log" "$entry/build.log"
	say "Built in $(($(date +%s) - started)) s; cached in $entry"
fi

# Install: copy the staged tree over /, leaving the existing directories'
# owners and modes alone.
say "Installing Citus $version into PostgreSQL $major ($pkglibdir)"
tar -C "$stage" -cf - . | as_root tar -C / -xf - --no-same-owner --no-overwrite-dir
if [ ! -f "$pkglibdir/citus.so" ] || [ ! -f "$sharedir/extension/citus.control" ]; then
	die "after installing, $pkglibdir/citus.so or $sharedir/extension/citus.control is missing"
fi
say "Citus $version is installed for PostgreSQL $major"

#!/usr/bin/env bash
# scripts/check-compat.sh - compile the C sources against the server headers
# of newer PostgreSQL majors, to check src/compat.h without their servers.
#
# usage: scripts/check-compat.sh [SUITE:MAJOR ...]   (default: trixie:17 sid:18)
#
# Debian 12 only packages PostgreSQL 15.  This downloads (never installs)
# postgresql-server-dev-MAJOR from the given Debian suite into a temporary
# directory, with its own apt lists, unpacks it there, and runs the compiler
# with -fsyntax-only and the CI's warning flags over src/*.c.  It checks that
# the sources compile, not that they work: nothing is linked or run.  Needs
# network access to deb.debian.org; not part of scripts/test.sh, since sid
# moves under it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -gt 0 ] || set -- trixie:17 sid:18
WORK=$(mktemp -d /tmp/snowflake-compat.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"	# apt's download user must be able to write here

status=0
for target in "$@"; do
	suite=${target%%:*}
	major=${target##*:}
	dir=$WORK/$suite
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/root"
	cat >"$dir/debian.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt=(-o "Dir::Etc::sourcelist=$dir/debian.sources" -o Dir::Etc::sourceparts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -q)
	say "PostgreSQL $major headers from Debian $suite"
	apt-get "${apt[@]}" update >"$dir/apt.log" 2>&1 || { cat "$dir/apt.log"; die "apt-get update failed"; }
	(cd "$dir" && apt-get "${apt[@]}" download "postgresql-server-dev-$major" libpq-dev) \
		>>"$dir/apt.log" 2>&1 || { cat "$dir/apt.log"; die "could not download the headers"; }
	for deb in "$dir"/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
	inc=$dir/root/usr/include/postgresql
	for src in "$REPO"/src/*.c; do
		if gcc -fsyntax-only -std=gnu99 -Wall -Wextra -Werror -Wno-unused-parameter \
			-DSNOWFLAKE_VERSION='"check"' -I"$inc/$major/server" -I"$inc" -I"$REPO/src" "$src"; then
			echo "    ok: $(basename "$src")"
		else
			status=1
		fi
	done
done
[ "$status" -eq 0 ] && say "The sources compile against every header set asked for"
exit "$status"

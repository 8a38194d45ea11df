#!/usr/bin/env bash
# scripts/pgindent.sh - format src/*.c and src/*.h the way PostgreSQL formats
# its own code, with PostgreSQL 15's pgindent.
# The options are in usage() below.
#
# pgindent is a perl script that PostgreSQL keeps in its source tree
# (src/tools/pgindent), with the list of PostgreSQL's own typedefs beside it;
# Debian does not ship it in a binary package.  The script takes both from
# Debian's postgresql-15 source package, fetched with `apt-get source` through
# a deb-src line for the archive the machine's apt already uses (never written
# into the system's sources), and caches them in
# /var/cache/snowflake-test/pgindent (as root) or
# ~/.cache/snowflake-test/pgindent.  The indent program it drives,
# pg_bsd_indent 2.1.1, is Debian's pg-bsd-indent package.
#
# The typedefs pgindent is given: PostgreSQL's list plus ours (typedefs.list
# at the top of the repository: add a line there for each new typedef).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/roots.sh
. "$REPO/scripts/roots.sh"

# The PostgreSQL source package the tool comes from; pgindent 15 insists on
# pg_bsd_indent 2.1.1, which is what bookworm's pg-bsd-indent is.
PGINDENT_SOURCE=postgresql-15
INDENT=/usr/bin/pg_bsd_indent

usage() {
	cat >&2 <<'EOF'
usage: scripts/pgindent.sh [--check]

  (none)    rewrite the files in src/ that pgindent would change
  --check   change nothing: print the diff pgindent would apply and exit 1 if
            there is one, 0 if src/ is pgindent-clean
EOF
	exit 2
}

check=
case ${1:-} in
	'') ;;
	--check) check=1 ;;
	*) usage ;;
esac
[ $# -le 1 ] || usage

if is_root; then
	CACHE=/var/cache/snowflake-test/pgindent
else
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/snowflake-test/pgindent
fi

# fetch_pgindent: put pgindent and PostgreSQL's typedefs.list into $CACHE,
# unless they are there already.
fetch_pgindent() {
	[ -x "$CACHE/pgindent" ] && [ -s "$CACHE/typedefs.list" ] && return 0
	local mirror codename tmp orig
	mirror=$(debian_mirror)
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	say "Fetching pgindent from Debian's $PGINDENT_SOURCE source package ($mirror)"
	tmp=$(mktemp -d /tmp/snowflake-pgindent.XXXXXX)
	# A private apt configuration: the system's sources and lists stay as
	# they are.
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src"
	echo "deb-src $mirror $codename main" >"$tmp/sources.list"
	local apt=(apt-get -q -o Dir::Etc::SourceList="$tmp/sources.list"
		-o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$tmp/lists"
		-o Dir::Cache="$tmp/cache" -o APT::Sandbox::User="$(id -un)")
	"${apt[@]}" update >"$tmp/apt.log" 2>&1 ||
		{ cat "$tmp/apt.log"; rm -rf "$tmp"; die "apt-get update (deb-src $mirror $codename) failed"; }
	(cd "$tmp/src" && "${apt[@]}" source --download-only "$PGINDENT_SOURCE") >"$tmp/apt.log" 2>&1 ||
		{ cat "$tmp/apt.log"; rm -rf "$tmp"; die "apt-get source $PGINDENT_SOURCE failed"; }
	orig=$(ls "$tmp"/src/"${PGINDENT_SOURCE}"_*.orig.tar.*)
	tar -xf "$orig" -C "$tmp/src" --wildcards --strip-components=4 \
		'*/src/tools/pgindent/pgindent' '*/src/tools/pgindent/typedefs.list'
	mkdir -p "$CACHE"
	install -m 755 "$tmp/src/pgindent" "$CACHE/pgindent"
	install -m 644 "$tmp/src/typedefs.list" "$CACHE/typedefs.list"
	basename "$orig" >"$CACHE/SOURCE"
	rm -rf "$tmp"
}

install_packages "${PGINDENT_PACKAGES[@]}"
fetch_pgindent

work=$(mktemp -d /tmp/snowflake-pgindent.XXXXXX)
trap 'rm -rf "$work"' EXIT
sort -u "$CACHE/typedefs.list" "$REPO/typedefs.list" >"$work/typedefs.list"

# pgindent rewrites files in place; --check runs it on a copy (b/src) and
# compares with the files as they are (a/src): the diff applies with
# `patch -p1` or `git apply`.
if [ -n "$check" ]; then
	mkdir -p "$work/a/src" "$work/b/src"
	cp "$REPO"/src/*.c "$REPO"/src/*.h "$work/a/src/"
	cp "$work"/a/src/* "$work/b/src/"
	(cd "$work/b/src" && "$CACHE/pgindent" --typedefs="$work/typedefs.list" \
		--indent="$INDENT" ./*.c ./*.h)
	if (cd "$work" && diff -ru a/src b/src >"$work/diff"); then
		echo "src/ is pgindent-clean ($(cat "$CACHE/SOURCE"))"
		exit 0
	fi
	cat "$work/diff"
	echo "src/ is not pgindent-clean: scripts/pgindent.sh applies the diff above" >&2
	exit 1
fi
(cd "$REPO/src" && "$CACHE/pgindent" --typedefs="$work/typedefs.list" \
	--indent="$INDENT" ./*.c ./*.h)
echo "src/ formatted with pgindent ($(cat "$CACHE/SOURCE")); see git diff"

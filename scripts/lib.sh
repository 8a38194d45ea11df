# scripts/lib.sh - helpers shared by demo.sh, test.sh, test-major.sh,
# build-deb.sh, pgindent.sh and the benchmarks in bench/ (source it, do not
# run it).
# The lists below are used by the scripts that source this file.
# shellcheck shell=bash disable=SC2034

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The PostgreSQL majors the test suite covers, each with the Debian suite
# that packages it: the one list of supported majors (src/compat.h, the
# README and docs/development.md point here).  The major of the host's own suite is tested on the host;
# every other one in a root of its suite that scripts/roots.sh builds.
# "experimental" stands for sid with the PostgreSQL packages from
# experimental (it holds little else).  16 is packaged by no Debian suite
# we can reach; 13 and 14 are refused by src/compat.h.
PG_MAJORS=(15 17 18 19)
declare -A PG_SUITE=([15]=bookworm [17]=trixie [18]=sid [19]=experimental)

# Debian packages, written with @PG@ for the PostgreSQL major: expand them
# with packages_for.  What the demo needs:
DEMO_PACKAGES=(postgresql-@PG@ postgresql-server-dev-@PG@ build-essential)
# what the first test needs (make installcheck: pg_regress, isolation and the
# core TAP scripts; scripts/test.sh --fast):
FAST_TEST_PACKAGES=("${DEMO_PACKAGES[@]}" libipc-run-perl faketime rsync)
# what the whole test suite needs, on every major (add yours here):
TEST_PACKAGES=("${FAST_TEST_PACKAGES[@]}" python3-psycopg2 python3-sqlalchemy
	postgresql-@PG@-partman postgresql-@PG@-pglogical postgresql-@PG@-auto-failover
	pg-auto-failover-cli nodejs npm ca-certificates python3-django ruby-activerecord ruby-pg)
# what building and testing the Debian package adds (build-deb.sh, test-deb.sh):
DEB_PACKAGES=(debhelper postgresql-server-dev-all dpkg-dev autopkgtest)
# and what the benchmark adds (bench/run.sh): gnuplot for the chart,
# valgrind for instruction counts.
BENCH_PACKAGES=("${DEMO_PACKAGES[@]}" rsync gnuplot-nox valgrind)
# and what scripts/pgindent.sh needs: pg_bsd_indent (pgindent itself comes
# from PostgreSQL's source package), perl to run it, diff for --check.
PGINDENT_PACKAGES=(pg-bsd-indent perl diffutils)

# Test packages that Debian does not package for a major: NOT_PACKAGED_<major>
# lists them (with @PG@ or the major written out).  packages_for leaves them
# out, test-major.sh checks that the suite really has no such package (so the
# list cannot go stale) and passes the list to the tests in
# SNOWFLAKE_NOT_PACKAGED;
# a TAP test that needs one of them calls need_package (t/SnowflakeTest.pm),
# which skips the test on those majors, with a message the summary repeats,
# and fails it on every other major where the package is missing.  Example:
#   NOT_PACKAGED_19=(postgresql-@PG@-pglogical)
NOT_PACKAGED_15=()
NOT_PACKAGED_17=()
NOT_PACKAGED_18=()
NOT_PACKAGED_19=(postgresql-@PG@-partman postgresql-@PG@-pglogical postgresql-@PG@-auto-failover)

# The PostgreSQL majors the Citus release we test with (14) supports; the
# test script builds it for those (scripts/build-citus.sh) when given its
# tarball.  Keep in step with t/304_citus.pl.
CITUS_MIN_MAJOR=16
CITUS_MAX_MAJOR=18
citus_supports() { [ "$1" -ge "$CITUS_MIN_MAJOR" ] && [ "$1" -le "$CITUS_MAX_MAJOR" ]; }

# not_packaged MAJOR: the test packages Debian does not package for MAJOR,
# one a line.
not_packaged() {
	local -n list=NOT_PACKAGED_$1
	local pkg
	for pkg in "${list[@]}"; do echo "${pkg//@PG@/$1}"; done
}

# packages_for MAJOR TEMPLATE...: the package names for MAJOR, one a line,
# without those NOT_PACKAGED_<MAJOR> lists.
packages_for() {
	local major=$1 pkg skip
	skip=" $(not_packaged "$major" | tr '\n' ' ') "
	shift
	for pkg in "$@"; do
		pkg=${pkg//@PG@/$major}
		[[ $skip == *" $pkg "* ]] || echo "$pkg"
	done
}

# host_major: the major that the host's Debian suite packages.
host_major() {
	local codename major
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	for major in "${PG_MAJORS[@]}"; do
		[ "${PG_SUITE[$major]}" = "$codename" ] && { echo "$major"; return 0; }
	done
	die "this machine runs Debian '${codename:-unknown}'; the scripts know the suites ${PG_SUITE[*]} (PG_SUITE in scripts/lib.sh)"
}

# use_major MAJOR: point PG_MAJOR, PG_BINDIR and PG_CONFIG at that major.
use_major() {
	PG_MAJOR=$1
	PG_BINDIR=/usr/lib/postgresql/$PG_MAJOR/bin
	PG_CONFIG=$PG_BINDIR/pg_config
}

export DEBIAN_FRONTEND=noninteractive

say() { printf '\n==> %s\n' "$*"; }
die() { printf '\nerror: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# as_root CMD...: run CMD as root, through sudo when we are not root.
as_root() {
	if is_root; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "this step needs root and sudo is not installed; as root, run: $*"
	fi
}

# install_packages PKG...: apt-get install those that are not installed yet.
# npm counts as installed when an npm command exists: NodeSource's nodejs
# package ships its own npm and cannot be installed beside Debian's.
install_packages() {
	local pkg missing=()
	for pkg in "$@"; do
		if [ "$pkg" = npm ] && command -v npm >/dev/null; then continue; fi
		[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] ||
			missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "Installing missing Debian packages: ${missing[*]}"
	is_root || command -v sudo >/dev/null ||
		die "sudo is not installed; as root, run: apt-get update && apt-get install -y ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q -o Dpkg::Use-Pty=0 "${missing[@]}"
}

# build_and_install: build the extension in $REPO (with $PG_CFLAGS, if set)
# and install it into the system PostgreSQL.
build_and_install() {
	say "Building the extension${PG_CFLAGS:+ with PG_CFLAGS=\"$PG_CFLAGS\"}"
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS="${PG_CFLAGS:-}"
	say "Installing it into $("$PG_CONFIG" --pkglibdir) (make install)"
	as_root make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install
}

# copy_tree SRC DEST [RSYNC OPTION...]: copy the source tree SRC to DEST
# without .git and the leftovers of earlier builds and test runs (a stale
# src/*.o would be found through VPATH by pg_buildext's build, for one).
copy_tree() {
	local src=$1 dest=$2
	shift 2
	rsync -a "$@" --exclude .git --exclude '/tmp_check*' --exclude '/output_*' \
		--exclude /results --exclude /log --exclude '/regression.*' --exclude /bench/out \
		--exclude '*.o' --exclude '*.so' --exclude '*.bc' --exclude '/build-*' \
		--exclude '/debian/postgresql-*' --exclude '/debian/.debhelper' \
		--exclude '/debian/files' --exclude '/debian/*.substvars' \
		--exclude '/debian/debhelper-build-stamp' \
		"$src/" "$dest/"
}

# PostgreSQL refuses to run as root: as root we run servers and tests as the
# postgres user (created by postgresql-common), otherwise as ourselves.
pg_user() { if is_root; then echo postgres; else id -un; fi; }

as_pg() {
	if is_root; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# owned_tmpdir NAME: a new directory under /tmp that pg_user owns.
owned_tmpdir() {
	local dir
	dir=$(mktemp -d "/tmp/snowflake-$1.XXXXXX")
	if is_root; then
		chown postgres:postgres "$dir"
	fi
	echo "$dir"
}

# Throwaway clusters (demo.sh, bench/run.sh) live in a directory of their
# own, DIR: the data directory is DIR/data, the log DIR/server.log, and the
# server listens only on a unix socket in DIR (no TCP), so its port cannot
# clash with any other server on the machine.

# cluster_create DIR PORT: initdb, then add to postgresql.conf the socket
# settings and the lines read from stdin.
cluster_create() {
	local dir=$1 port=$2
	as_pg "$PG_BINDIR/initdb" -D "$dir/data" -A trust -E UTF8 --no-locale --no-sync \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; die "initdb failed"; }
	{
		printf '\n# added by %s\n' "$(basename "$0")"
		printf "listen_addresses = ''\t\t\t# no TCP, only the unix socket below\n"
		printf "unix_socket_directories = '%s'\nport = %s\n" "$dir" "$port"
		cat
	} >>"$dir/data/postgresql.conf"
}

cluster_start() {
	as_pg "$PG_BINDIR/pg_ctl" -D "$1/data" -l "$1/server.log" -w -s start ||
		{ cat "$1/server.log"; die "the server did not start"; }
}

cluster_stop() {
	as_pg "$PG_BINDIR/pg_ctl" -D "$1/data" -m fast -s stop 2>/dev/null || true
}

# bench_target SCRIPT MAJOR HERE [NAME... -- ARG...]: where a benchmark
# script runs.  With HERE (its --here), or without MAJOR (its --pg) when
# PG_CONFIG names a PostgreSQL of its own, on this system; otherwise MAJOR
# (default: the host's), and a major the host does not package runs
# bench/SCRIPT in that major's root instead (bench_in_root, passing on the
# environment variables NAME... that are set, and the ARGs) and exits.
# Afterwards PG_MAJOR, PG_BINDIR and PG_CONFIG name the PostgreSQL to use,
# and BENCH_OWN_PG is 1 when PG_CONFIG named one of its own, which needs
# only the tools, not the server's packages.
bench_target() {
	local script=$1 major=$2 here=$3 host
	shift 3
	if [ -z "$here" ] && { [ -n "$major" ] || [ -z "${PG_CONFIG:-}" ]; }; then
		host=$(host_major) || exit 1
		major=${major:-$host}
		[ -n "${PG_SUITE[$major]:-}" ] || die "PostgreSQL $major is not one of ${PG_MAJORS[*]}"
		if [ "$major" != "$host" ]; then
			# shellcheck source=scripts/roots.sh
			. "$REPO/scripts/roots.sh"
			bench_in_root "$major" "$script" "$@" || exit 1
			exit 0
		fi
	fi
	BENCH_OWN_PG=
	if [ -n "$major" ]; then
		use_major "$major"
	else
		PG_BINDIR=$("$PG_CONFIG" --bindir)
		PG_MAJOR=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
		BENCH_OWN_PG=1
	fi
}

# psql_bench ARG...: psql on database bench of the throwaway cluster in
# $WORK on port $PORT, unaligned and quiet, stopping at the first error (the
# benchmarks' client: bench/run.sh, bench/latency.sh).
# shellcheck disable=SC2153 # PORT is the calling script's
psql_bench() {
	as_pg "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$WORK" -p "$PORT" -d bench "$@"
}

# inclusive FUNCTION CALLGRIND_OUT: the instructions callgrind counted in
# FUNCTION and everything it called, the benchmarks' instruction counts (awk
# reads to the end: an early exit would kill the writer with SIGPIPE, which
# pipefail reports)
inclusive() {
	callgrind_annotate --inclusive=yes --threshold=100 "$2" 2>/dev/null |
		awk -v f="$1" '!found && $0 ~ (":" f " ") { gsub(",", "", $1); print $1; found = 1 }'
}

# enter_workdir NAME: make WORK a new directory that pg_user owns, and the
# current directory (one the cluster's user can enter).  On exit, error or
# Ctrl-C: stop background jobs, stop a cluster still running in WORK, and
# remove WORK.
enter_workdir() {
	WORK=$(owned_tmpdir "$1")
	trap leave_workdir EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	cd "$WORK" || exit
}

leave_workdir() {
	local status=$? pids
	cd /
	pids=$(jobs -p)
	# shellcheck disable=SC2086 # one word per pid
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	if [ -f "$WORK/data/postmaster.pid" ]; then
		say "Stopping the cluster and removing $WORK"
		cluster_stop "$WORK"
	fi
	rm -rf "$WORK"
	exit "$status"
}

# scripts/lib.sh - helpers shared by demo.sh and test.sh (source it, do not run it).
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=15
PG_BINDIR=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BINDIR/pg_config

# Debian packages: what the demo needs, then what the whole test suite adds.
DEMO_PACKAGES=("postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" build-essential)
# shellcheck disable=SC2034 # used by test.sh
TEST_PACKAGES=("${DEMO_PACKAGES[@]}" libipc-run-perl faketime rsync
	python3-psycopg2 python3-sqlalchemy gnuplot-nox "postgresql-$PG_MAJOR-partman")

# What the benchmark adds (bench/run.sh): gnuplot for the chart, valgrind
# for instruction counts.
# shellcheck disable=SC2034 # used by bench/run.sh
BENCH_PACKAGES=("${DEMO_PACKAGES[@]}" gnuplot-nox valgrind)

# What building the Debian package adds (scripts/build-deb.sh).
# shellcheck disable=SC2034 # used by build-deb.sh
DEB_PACKAGES=(debhelper postgresql-server-dev-all "postgresql-server-dev-$PG_MAJOR"
	dpkg-dev build-essential rsync)

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
install_packages() {
	local pkg missing=()
	for pkg in "$@"; do
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

# enter_workdir NAME: make WORK a new directory that pg_user owns, and the
# current directory (one the cluster's user can enter).  On exit, error or
# Ctrl-C: stop background jobs, stop a cluster still running in WORK, and
# remove WORK.
enter_workdir() {
	WORK=$(owned_tmpdir "$1")
	trap leave_workdir EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	cd "$WORK"
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

# scripts/roots.sh - Debian roots for the PostgreSQL majors that the host's
# Debian suite does not package (source it after lib.sh, do not run it).
# shellcheck shell=bash
#
# A root is a minimal Debian system of the suite that packages the major
# (PG_SUITE in lib.sh), made by mmdebstrap with the test suite's packages,
# in ROOTS_DIR/pgMAJOR.  It is cached between runs: ensure_root rebuilds it
# only when it is missing, unfinished (a build that stopped half-way leaves
# no stamp), unusable, or was made by another recipe.  Its packages are not
# upgraded: the test run installs the ones that are missing, nothing more.
#
# The package mirror is the host's own: the URI apt uses for the host's
# suite (debian_mirror), written into the root's sources on every run.  The
# Release files of sid and experimental on a mirror snapshot can be past
# their Valid-Until date, so the roots do not check it.
#
# root_run runs a command in a root, as root, in a private mount and PID
# namespace: /proc, /dev, /dev/shm and /sys are mounted for it alone, and
# when the command ends every process it left (a server, say) is killed and
# every mount goes away with the namespace.

ROOTS_DIR=${SNOWFLAKE_ROOTS_DIR:-/var/cache/snowflake-test/roots}
# Where a root keeps a copy of the host's NODE_EXTRA_CA_CERTS file.
ROOT_EXTRA_CA_CERTS=/etc/ssl/host-extra-ca-certs.pem
# Bump when a change below needs every root made again.
ROOT_RECIPE_VERSION=1

# debian_mirror: the archive URI the host's apt configuration uses for the
# host's own suite, as apt writes it (scheme, host and path: whatever the
# machine's sources name).
debian_mirror() {
	local codename mirror
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	mirror_of() {
		# shellcheck disable=SC2016 # apt's own $(FIELD) syntax
		apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(SITE)' 2>/dev/null |
			awk -v s="$codename" '$1 == "deb" && $2 == s { print $3; exit }'
	}
	mirror=$(mirror_of)
	if [ -z "$mirror" ]; then	# apt knows its targets once it has read their lists
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
		mirror=$(mirror_of)
	fi
	[ -n "$mirror" ] ||
		die "no apt source for Debian '$codename' on this machine (apt-get indextargets): the roots take their mirror from it"
	echo "$mirror"
}

root_dir() { echo "$ROOTS_DIR/pg$1"; }

# root_suites MAJOR: the suites a root's apt sources list.
root_suites() {
	case ${PG_SUITE[$1]} in
		experimental) echo sid experimental ;;
		*) echo "${PG_SUITE[$1]}" ;;
	esac
}

# root_preferences MAJOR: the root's apt pins.  In the sid + experimental
# root, everything built from PostgreSQL's own source package (the server,
# client, headers, libpq) comes from experimental, the rest from sid.
root_preferences() {
	[ "${PG_SUITE[$1]}" = experimental ] || return 0
	printf '%s\n' "Package: src:postgresql-$1" "Pin: release a=experimental" "Pin-Priority: 500"
}

# root_recipe MAJOR: what a root is made from; a root whose stamp differs
# is made again.
root_recipe() {
	echo "recipe $ROOT_RECIPE_VERSION: PostgreSQL $1 from Debian $(root_suites "$1")"
	root_preferences "$1"
}

# root_sources MAJOR MIRROR: the root's /etc/apt/sources.list.
root_sources() {
	local suite
	for suite in $(root_suites "$1"); do echo "deb $2 $suite main"; done
}

# root_ok MAJOR: the root is complete, made by this recipe, and runs.
root_ok() {
	local dir
	dir=$(root_dir "$1")
	[ -f "$dir/etc/snowflake-root" ] &&
		[ "$(cat "$dir/etc/snowflake-root")" = "$(root_recipe "$1")" ] &&
		as_root chroot "$dir" /bin/true 2>/dev/null
}

# remove_root_dir DIR: remove a root, refusing if anything is mounted in it.
remove_root_dir() {
	[ -e "$1" ] || return 0
	if findmnt -rn -o TARGET | grep -q "^$1/"; then
		die "something is mounted under $1; unmount it before the root can be rebuilt"
	fi
	as_root rm -rf --one-file-system "$1"
}

# build_root MAJOR: make the root with mmdebstrap, with the test suite's
# packages, into DIR.new, and move it into place once it is complete.  On
# failure, says which suite could not be built and why, and returns 1.
build_root() {
	local major=$1 dir mirror log stage status=0 mirrors includes
	dir=$(root_dir "$major")
	mirror=$(debian_mirror)
	install_packages mmdebstrap
	say "Building the Debian $(root_suites "$major" | sed 's/ / + /') root for PostgreSQL $major in $dir (from $mirror)"
	remove_root_dir "$dir.new"
	as_root mkdir -p "$ROOTS_DIR"
	log=$(mktemp /tmp/snowflake-root.XXXXXX.log)
	# What the root needs before any package is installed: the apt pins, and
	# no main cluster (postgresql-common makes one with each server package).
	stage=$(mktemp -d /tmp/snowflake-root.XXXXXX)
	mkdir -p "$stage/etc/apt/preferences.d" "$stage/etc/postgresql-common/createcluster.d"
	root_preferences "$major" >"$stage/etc/apt/preferences.d/snowflake"
	echo 'create_main_cluster = false' >"$stage/etc/postgresql-common/createcluster.d/snowflake.conf"
	chmod -R a+rX "$stage"
	mapfile -t mirrors < <(root_sources "$major" "$mirror")
	includes=$(packages_for "$major" "${TEST_PACKAGES[@]}" "${DEB_PACKAGES[@]}" | paste -sd, -)
	# After mmdebstrap, no daemon starts when a package is installed (the
	# test run installs the ones a root lacks).
	# shellcheck disable=SC2016 # $1 is the hook's argument, the root
	as_root mmdebstrap --mode=root --variant=apt --skip=cleanup/apt/lists \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='Acquire::Languages "none"' \
		--aptopt='APT::Install-Recommends "false"' \
		--setup-hook="sync-in $stage /" \
		--customize-hook='printf "#!/bin/sh\nexit 101\n" >"$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"' \
		--include="$includes" \
		"$(root_suites "$major" | cut -d' ' -f1)" "$dir.new" "${mirrors[@]}" \
		>"$log" 2>&1 || status=$?
	rm -rf "$stage"
	if [ "$status" -ne 0 ]; then
		tail -n 30 "$log" >&2
		printf '\nerror: could not build the Debian %s root for PostgreSQL %s from %s (mmdebstrap exited with %s; its last lines are above, all of them in %s)\n' \
			"$(root_suites "$major" | sed 's/ / + /')" "$major" "$mirror" "$status" "$log" >&2
		remove_root_dir "$dir.new"
		return 1
	fi
	root_recipe "$major" | as_root tee "$dir.new/etc/snowflake-root" >/dev/null
	remove_root_dir "$dir"
	as_root mv "$dir.new" "$dir"
	rm -f "$log"
}

# ensure_root MAJOR: a usable root for MAJOR, built if needed; its apt
# sources point at the host's mirror of today.  Returns 1 (having said why)
# if it cannot be built.
ensure_root() {
	local dir
	dir=$(root_dir "$1")
	if root_ok "$1"; then
		say "Using the cached Debian $(root_suites "$1" | sed 's/ / + /') root for PostgreSQL $1 in $dir"
	else
		build_root "$1" || return 1
	fi
	root_sources "$1" "$(debian_mirror)" | as_root tee "$dir/etc/apt/sources.list" >/dev/null
	as_root cp -L /etc/resolv.conf /etc/hosts "$dir/etc/"
	# The extra certificates this machine trusts for Node (a TLS proxy's,
	# say), so that npm in the root reaches the registry as on the host.
	if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
		as_root cp -L "$NODE_EXTRA_CA_CERTS" "$dir/$ROOT_EXTRA_CA_CERTS"
	fi
}

# root_sync_tree MAJOR: copy this tree (without .git and build leftovers)
# to /build/snowflake in the root.
root_sync_tree() {
	as_root mkdir -p "$(root_dir "$1")/build" &&
		as_root bash -c "$(declare -f copy_tree); copy_tree \"\$1\" \"\$2\" --delete" sh \
		"$REPO" "$(root_dir "$1")/build/snowflake"
}

# root_run MAJOR [NAME=VALUE...] COMMAND...: run COMMAND as root in the
# root, in a clean environment (plus the NAME=VALUE pairs), in a private
# mount and PID namespace.
root_run() {
	local dir
	dir=$(root_dir "$1")
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	as_root unshare --mount --pid --fork --kill-child -- sh -ec '
		dir=$1
		shift
		mount --make-rprivate /
		mount -t proc proc "$dir/proc"
		mount --rbind /dev "$dir/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$dir/dev/shm"
		mount -t sysfs sysfs "$dir/sys"
		chroot "$dir" "$@"' sh "$dir" \
		env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" ${CI:+CI="$CI"} \
		${NODE_EXTRA_CA_CERTS:+NODE_EXTRA_CA_CERTS="$ROOT_EXTRA_CA_CERTS"} \
		${http_proxy:+http_proxy="$http_proxy"} ${https_proxy:+https_proxy="$https_proxy"} \
		${no_proxy:+no_proxy="$no_proxy"} \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# bench_in_root MAJOR SCRIPT [NAME...] -- [ARG...]: run bench/SCRIPT with
# --here --pg MAJOR and the ARGs in MAJOR's root, passing on those of the
# environment variables NAME that are set, then copy what it wrote into
# $BENCH_OUT (default bench/out).
bench_in_root() {
	local major=$1 script=$2 dir out settings=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ -z "${!1:-}" ] || settings+=("$1=${!1}")
		shift
	done
	[ $# -eq 0 ] || shift
	ensure_root "$major" || return 1
	root_sync_tree "$major"
	dir=$(root_dir "$major")
	as_root rm -rf "$dir/build/bench-out"
	root_run "$major" "${settings[@]}" BENCH_OUT=/build/bench-out \
		bash "/build/snowflake/bench/$script" --here --pg "$major" "$@" || return 1
	out=${BENCH_OUT:-$REPO/bench/out}
	mkdir -p "$out"
	cp "$dir"/build/bench-out/* "$out/"
	say "Copied the report of PostgreSQL $major to $out"
}

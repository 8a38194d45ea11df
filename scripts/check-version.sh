#!/usr/bin/env bash
# scripts/check-version.sh - check that every place naming the extension's
# version agrees with the one source of truth, default_version in
# snowflake.control:
#   - the Makefile's EXTVERSION (read from the control file),
#   - META.json: "version" and provides.snowflake.version, as X.Y.0 for X.Y
#     (PGXN wants three-part semantic versions),
#   - debian/changelog: the newest entry's version,
#   - CHANGELOG.md: a "## [X.Y]" section,
#   - the SQL scripts: an install or upgrade script that ends at X.Y.
# Prints each mismatch and exits 1 if there is one. Needs only sed, grep
# and python3 (for the JSON).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
mismatch() { echo "version mismatch: $*" >&2; fail=1; }

version=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" snowflake.control)
[ -n "$version" ] || { echo "no default_version in snowflake.control" >&2; exit 1; }
case $version in
	*.*.*) semver=$version ;;
	*.*) semver=$version.0 ;;
	*) semver=$version.0.0 ;;
esac

pg_config=${PG_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
make_version=$(make -s --no-print-directory PG_CONFIG="$pg_config" print-version)
[ "$make_version" = "$version" ] || mismatch "Makefile EXTVERSION is '$make_version', snowflake.control says '$version'"

read -r meta_version provides_version < <(python3 -c '
import json
m = json.load(open("META.json"))
print(m["version"], m["provides"]["snowflake"]["version"])')
[ "$meta_version" = "$semver" ] || mismatch "META.json version is '$meta_version', expected '$semver'"
[ "$provides_version" = "$semver" ] ||
	mismatch "META.json provides.snowflake.version is '$provides_version', expected '$semver'"

deb_version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
[ "${deb_version%-*}" = "$version" ] ||
	mismatch "debian/changelog's newest version is '$deb_version', expected '$version' (or '$version-N')"

grep -q "^## \[$version\]" CHANGELOG.md || mismatch "CHANGELOG.md has no '## [$version]' section"

scripts=(snowflake--"$version".sql snowflake--*--"$version".sql)
found=
for f in "${scripts[@]}"; do [ -f "$f" ] && found=$f; done
[ -n "$found" ] || mismatch "no snowflake--$version.sql or snowflake--*--$version.sql"

if [ "$fail" -ne 0 ]; then
	exit 1
fi
echo "version $version agrees in snowflake.control, Makefile, META.json ($semver), debian/changelog, CHANGELOG.md and the SQL scripts"

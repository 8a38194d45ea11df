# Makefile for the snowflake extension (PGXS)

# The directory of this Makefile: "." normally, the source tree in a VPATH
# build (pg_buildext builds in build-15/ with -f ../Makefile VPATH=..).
SNOWFLAKE_SRCDIR := $(dir $(firstword $(MAKEFILE_LIST)))

EXTENSION = snowflake
# The one source of truth for the version is default_version in the control
# file; META.json and debian/changelog must agree (scripts/check-version.sh).
EXTVERSION := $(shell sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" \
	$(SNOWFLAKE_SRCDIR)snowflake.control)
MODULE_big = snowflake
OBJS = src/snowflake.o src/layout.o src/epoch.o src/generator.o src/mark.o \
	src/mark_writer.o src/lease.o src/nextval.o src/stats.o src/parts.o src/time_range.o src/base32.o \
	src/type.o
DATA = $(notdir $(wildcard $(SNOWFLAKE_SRCDIR)snowflake--*.sql))
# for SNOWFLAKE_MODULE_MAGIC (src/compat.h); libpq for the lease keeper
# (src/lease.c), linked as dblink and postgres_fdw link it
PG_CPPFLAGS = -DSNOWFLAKE_VERSION='"$(EXTVERSION)"' -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)
PGFILEDESC = "snowflake - Twitter-style 64-bit IDs"

# The tests (docs/development.md, "Testing").  None needs a running server:
# each runs in throwaway instances that preload the library (sql/*.conf).
#   make installcheck           the first test to run: pg_regress, isolation
#                               and the core TAP scripts (TAP_CORE)
#   make installcheck-clients   TAP: dump and restore, pg_partman, ORMs and
#                               client drivers (TAP_CLIENTS)
#   make installcheck-fleet     TAP: fleets: logical replication, the registry,
#                               Citus, pglogical, pg_auto_failover (TAP_FLEET)
#   make installcheck-all       all of them, as scripts/test.sh runs them on
#                               every major
# A TAP script joins its group by its number (t/31x_*.pl is a fleet test).
# PROVE_TESTS='t/204_partman.pl' runs the scripts named instead of a group;
# TAP_JOBS=1 runs the scripts one at a time.
REGRESS = upgrade type type_soft_errors settings functions discard parse markings stats batch \
	time_functions time_encode time_range time_partition time_properties \
	migrate migrate_type registry lease trusted idempotency
REGRESS_OPTS = --temp-config=$(srcdir)/sql/preloaded.conf --temp-instance=tmp_check
ISOLATION = concurrent migrate_concurrent idempotency_concurrent lease_concurrent
ISOLATION_OPTS = --temp-config=$(srcdir)/sql/preloaded.conf --temp-instance=tmp_check_isolation
TAP_TESTS = 1
# TAP script groups, as globs (prove runs in the source directory).
# t/0*: the generator, its settings, layouts and clocks; t/1*: restarts,
# crashes, recovery and the persisted mark.
TAP_CORE = t/0*.pl t/1*.pl
TAP_CLIENTS = t/2*.pl
TAP_FLEET = t/3*.pl
PROVE_TESTS ?= $(TAP_CORE)
# Most of a TAP script's time is spent waiting (fsync, sleeps, servers
# starting, client programs): prove runs TAP_JOBS of them at once.
TAP_JOBS ?= 3

EXTRA_CLEAN = tmp_check_isolation tmp_check_unconfigured tmp_check_nopreload \
	output_iso output_unconfigured output_nopreload

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# (after PGXS, which empties PROVE_FLAGS; PROVE_FLAGS=... on the command line
# still wins)  --timer: each script's time in the output.
PROVE_FLAGS = -j$(TAP_JOBS) --timer

# Two more pg_regress runs, each in an instance of its own: the library
# preloaded without a worker id, and not preloaded at all.  They go with
# the other pg_regress tests: `make installcheck REGRESS=` leaves them out
# too (scripts/test-major.sh runs pg_regress, isolation and each TAP group
# one after the other that way, so that a failure in one does not stop the
# others).
ifneq ($(REGRESS),)
installcheck: installcheck-unconfigured installcheck-nopreload
endif

# The integration groups: TAP scripts only.  (A target's variables also hold
# for its prerequisites: installcheck-all runs installcheck with every group.)
installcheck-clients: PROVE_TESTS = $(TAP_CLIENTS)
installcheck-fleet: PROVE_TESTS = $(TAP_FLEET)
installcheck-clients installcheck-fleet: submake
	$(prove_installcheck)

installcheck-all: PROVE_TESTS = $(TAP_CORE) $(TAP_CLIENTS) $(TAP_FLEET)
installcheck-all: installcheck

installcheck-unconfigured: submake
	$(pg_regress_installcheck) --temp-config=$(srcdir)/sql/unconfigured.conf \
		--temp-instance=tmp_check_unconfigured --outputdir=output_unconfigured unconfigured

installcheck-nopreload: submake
	$(pg_regress_installcheck) --temp-instance=tmp_check_nopreload \
		--outputdir=output_nopreload nopreload

.PHONY: installcheck-unconfigured installcheck-nopreload installcheck-clients \
	installcheck-fleet installcheck-all

# A VPATH build has no src/ directory for the objects yet.
$(OBJS) $(OBJS:.o=.bc): | objdir
objdir:
	@mkdir -p src

# The release archive for PGXN, named after the version in the control file.
dist:
	git -C $(SNOWFLAKE_SRCDIR) archive --format zip --prefix=$(EXTENSION)-$(EXTVERSION)/ \
		-o $(CURDIR)/$(EXTENSION)-$(EXTVERSION).zip HEAD

# Print the version (scripts/check-version.sh compares it with the others).
print-version:
	@echo $(EXTVERSION)

.PHONY: objdir dist print-version

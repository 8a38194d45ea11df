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
	src/mark_writer.o src/nextval.o src/stats.o src/parts.o src/time_range.o src/base32.o
DATA = $(notdir $(wildcard $(SNOWFLAKE_SRCDIR)snowflake--*.sql))
# for SNOWFLAKE_MODULE_MAGIC (src/compat.h)
PG_CPPFLAGS = -DSNOWFLAKE_VERSION='"$(EXTVERSION)"'
PGFILEDESC = "snowflake - Twitter-style 64-bit IDs"

# pg_regress and isolation tests run in throwaway instances that preload the
# library (see sql/*.conf); `make installcheck` needs no running server.
REGRESS = upgrade settings functions discard parse markings stats batch \
	time_functions time_encode time_range time_partition time_properties \
	migrate registry trusted idempotency
REGRESS_OPTS = --temp-config=$(srcdir)/sql/preloaded.conf --temp-instance=tmp_check
ISOLATION = concurrent migrate_concurrent idempotency_concurrent
ISOLATION_OPTS = --temp-config=$(srcdir)/sql/preloaded.conf --temp-instance=tmp_check_isolation
TAP_TESTS = 1

EXTRA_CLEAN = tmp_check_isolation tmp_check_unconfigured tmp_check_nopreload \
	output_iso output_unconfigured output_nopreload

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Two more pg_regress runs, each in an instance of its own: the library
# preloaded without a worker id, and not preloaded at all.  They go with
# the other pg_regress tests: `make installcheck REGRESS=` leaves them out
# too (scripts/test.sh runs pg_regress, isolation and TAP tests one after
# the other that way, so that a failure in one does not stop the others).
ifneq ($(REGRESS),)
installcheck: installcheck-unconfigured installcheck-nopreload
endif

installcheck-unconfigured: submake
	$(pg_regress_installcheck) --temp-config=$(srcdir)/sql/unconfigured.conf \
		--temp-instance=tmp_check_unconfigured --outputdir=output_unconfigured unconfigured

installcheck-nopreload: submake
	$(pg_regress_installcheck) --temp-instance=tmp_check_nopreload \
		--outputdir=output_nopreload nopreload

.PHONY: installcheck-unconfigured installcheck-nopreload

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

# Makefile for the snowflake extension (PGXS)

EXTENSION = snowflake
MODULE_big = snowflake
OBJS = src/snowflake.o src/layout.o src/generator.o src/mark.o src/functions.o \
	src/timefuncs.o
DATA = $(wildcard snowflake--*.sql)
PGFILEDESC = "snowflake - Twitter-style 64-bit IDs"

# pg_regress and isolation tests run in throwaway instances that preload the
# library (see sql/*.conf); `make installcheck` needs no running server.
REGRESS = upgrade settings functions parse markings stats batch \
	time_functions time_encode time_range time_partition time_properties migrate
REGRESS_OPTS = --temp-config=$(srcdir)/sql/preloaded.conf --temp-instance=tmp_check
ISOLATION = concurrent
ISOLATION_OPTS = --temp-config=$(srcdir)/sql/preloaded.conf --temp-instance=tmp_check_isolation
TAP_TESTS = 1

EXTRA_CLEAN = tmp_check_isolation tmp_check_unconfigured tmp_check_nopreload \
	output_iso output_unconfigured output_nopreload

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Two more pg_regress runs, each in an instance of its own: the library
# preloaded without a worker id, and not preloaded at all.
installcheck: installcheck-unconfigured installcheck-nopreload

installcheck-unconfigured: submake
	$(pg_regress_installcheck) --temp-config=$(srcdir)/sql/unconfigured.conf \
		--temp-instance=tmp_check_unconfigured --outputdir=output_unconfigured unconfigured

installcheck-nopreload: submake
	$(pg_regress_installcheck) --temp-instance=tmp_check_nopreload \
		--outputdir=output_nopreload nopreload

.PHONY: installcheck-unconfigured installcheck-nopreload

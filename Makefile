# pgolab: build, test and demo. `make demo` and `make check` install missing
# Debian packages first (scripts/install-deps.sh), so both work on a fresh machine.

CC      ?= cc
# The pgolab binary does not link libsqlite3: the SQLite it measures is the variant's, loaded
# by src/db/sqlite.c, and the results store loads the system one at run time
# (src/store/sqlite_api.c). <sqlite3.h> is used for types only; the unit tests link it.
PKGS    := jansson gsl libmariadb libpq libdw
OPT     ?= -O2 -g
WARN    ?= -Wall -Wextra -Werror
CFLAGS  ?= $(OPT)
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -pthread -Isrc \
             $(shell pkg-config --cflags $(PKGS) sqlite3 2>/dev/null) $(CFLAGS)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl -lm -pthread
TEST_LDLIBS := $(LDLIBS) $(shell pkg-config --libs sqlite3 2>/dev/null) -lcmocka

SRC     := $(sort $(wildcard src/*.c src/*/*.c))
LIBSRC  := $(filter-out src/main.c,$(SRC))
OBJ     := $(SRC:%.c=build/%.o)
LIBOBJ  := $(LIBSRC:%.c=build/%.o)
UNIT    := $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_*.c))

.PHONY: all deps check unit unit-build e2e demo bench clean
all: pgolab

deps:
	@sh scripts/install-deps.sh

pgolab: $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $(OBJ) $(LDLIBS)

build/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

build/tests/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBOBJ) $(TEST_LDLIBS)

unit-build: $(UNIT)

unit: $(UNIT)
	@set -e; for t in $(UNIT); do echo "== $$t"; $$t; done

e2e: pgolab
	prove -v tests/e2e/

# Quiet: one line per test file and the totals (tests/check.sh); a failing file's whole
# output and every skip's reason are shown, everything else is in build/check.log.
CHECK_LOG := build/check.log
E2E_DIR ?= tests/e2e
check: deps
	@mkdir -p build && : >$(CHECK_LOG)
	@echo "make check: building (output in $(CHECK_LOG))"
	@if ! $(MAKE) pgolab unit-build >>$(CHECK_LOG) 2>&1; then \
	    tail -n 40 $(CHECK_LOG); echo "make check: FAIL: the build failed (see $(CHECK_LOG))"; exit 1; fi
	@bash tests/check.sh --log=$(CHECK_LOG) --e2e=$(E2E_DIR) $(UNIT)

demo: deps
	$(MAKE) pgolab
	./pgolab pgo sqlite

clean:
	rm -rf build pgolab

-include $(OBJ:.o=.d)

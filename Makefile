# SPDX-License-Identifier: MIT
#
# One non-recursive Makefile. ./configure writes config.mk; every directory
# adds its objects below. Objects depend on their headers through -MMD -MP.

-include config.mk

ifeq ($(wildcard config.mk),)
$(error run ./configure first)
endif

CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(SAN_CFLAGS) $(DEP_CFLAGS) -I. -MMD -MP $(CFLAGS)
LDFLAGS_ALL = $(SAN_LDFLAGS) $(LDFLAGS)
LIBS = $(DEP_LIBS) -lpthread -lm

EMU_SRC =
include emu/Makefile.inc libhost/Makefile.inc topologies/Makefile.inc
EMU_OBJ = $(EMU_SRC:.c=.o)
LIBEMU = emu/libemu.a

PROGS = emu/canary-emu bench/engine
TEST_SRC = $(wildcard t/*.c)
TESTS = $(TEST_SRC:.c=.t)
SCRIPT_TESTS = $(wildcard t/*.py)

OBJS = $(EMU_OBJ) emu/main.o bench/engine.o $(TEST_SRC:.c=.o)
DEPS = $(OBJS:.o=.d)

PROVE ?= prove
PROVE_FLAGS ?= -j2

.PHONY: all check bench bench-paper run clean install distclean

all: $(PROGS) $(TESTS)

%.o: %.c config.mk
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(LIBEMU): $(EMU_OBJ)
	rm -f $@
	ar rcs $@ $^

emu/canary-emu: emu/main.o $(LIBEMU)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

bench/engine: bench/engine.o $(LIBEMU)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

t/%.t: t/%.o $(LIBEMU)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

# make check: build everything, run the TAP suite with prove: tests in
# parallel, then the ones that measure wall-clock time alone (*-wall*.t), so
# that other tests do not steal their cores.
# TESTS_ONLY='t/00*.t' narrows it (CI uses that for ThreadSanitizer).
CHECK_TESTS = $(if $(TESTS_ONLY),$(wildcard $(TESTS_ONLY)),$(TESTS) $(SCRIPT_TESTS))
SERIAL_TESTS = $(filter %wallclock.t,$(CHECK_TESTS))
PAR_TESTS = $(filter-out $(SERIAL_TESTS),$(CHECK_TESTS))

check: all
	$(PROVE) $(PROVE_FLAGS) $(PAR_TESTS)
	$(if $(SERIAL_TESTS),$(PROVE) $(SERIAL_TESTS))


bench: $(PROGS)
	bench/run-quick

# the whole evaluation of the paper (long: see bench/README.md); SEEDS="1 2 3 4 5",
# JOBS=N: N runs side by side (bench/lib.sh)
bench-paper: $(PROGS)
	bench/paper.sh
	perl bench/summarize.pl bench/results > bench/results/summary.md
	gnuplot bench/plot.gp

run: $(PROGS)
	emu/canary-emu $(RUN_ARGS)

install: $(PROGS)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 emu/canary-emu $(DESTDIR)$(PREFIX)/bin/canary-emu

clean:
	rm -f $(OBJS) $(DEPS) $(LIBEMU) $(PROGS) $(TESTS)

distclean: clean
	rm -f config.mk

-include $(DEPS)

# SPDX-License-Identifier: MIT
#
# One non-recursive Makefile. ./configure writes config.mk; every directory
# adds its objects below. Objects depend on their headers through -MMD -MP,
# and on config.flags: the part of config.mk they are built with, which
# ./configure rewrites only when it changes (a new --prefix rebuilds
# nothing: no object uses the installation directories).

-include config.mk

ifeq ($(wildcard config.mk),)
$(error run ./configure first)
endif

CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) $(LTO) $(WARN) $(SAN_CFLAGS) $(DEP_CFLAGS) $(TARGET_CFLAGS) -I. -MMD -MP $(CFLAGS)
LDFLAGS_ALL = $(SAN_LDFLAGS) $(LTO) $(LDFLAGS)
LIBS = $(DEP_LIBS) -lpthread -lm

# the release; libhost's ABI number is its own (libhost/Makefile.inc)
VERSION = 1.0.0

# where make install puts things (./configure writes them; DESTDIR is
# prepended to each, for staging and packaging)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DATADIR ?= $(PREFIX)/share
SHAREDIR = $(DATADIR)/canary

# the fragments below define rules before `all:`; a bare `make` builds all
.DEFAULT_GOAL := all

EMU_SRC =
include emu/Makefile.inc libhost/Makefile.inc topologies/Makefile.inc libhost/tools/Makefile.inc \
	libhost/mpi/Makefile.inc
EMU_OBJ = $(EMU_SRC:.c=.o)
LIBEMU = emu/libemu.a

PROGS = emu/canary-emu bench/engine $(TOOLS)
LIBS_BUILT = $(LIBHOST_A) $(LIBHOST_SO) $(MPI_SO)
TEST_SRC = $(wildcard t/*.c)
TESTS = $(TEST_SRC:.c=.t)
SCRIPT_TESTS = $(wildcard t/*.py)

include t/fuzz/Makefile.inc

OBJS = $(EMU_OBJ) $(LIBHOST_OBJ) $(LIBHOST_PIC) $(MPI_OBJ) emu/main.o bench/engine.o $(TOOLS_SRC:.c=.o) $(TEST_SRC:.c=.o) $(FUZZ_SRC:.c=.o)
DEPS = $(OBJS:.o=.d)

PROVE ?= prove
PROVE_FLAGS ?= -j2

# nothing built is an intermediate to delete: the objects of the tests and
# fuzz targets stay, so that a second make does nothing (t/0081)
.SECONDARY:

# a tree configured before config.flags existed: derive it once
config.flags:
	grep -Ev '^(#|(PREFIX|BINDIR|LIBDIR|INCLUDEDIR|MANDIR) =)' config.mk > $@

.PHONY: all check bench bench-paper run clean install uninstall distclean

all: $(PROGS) $(LIBS_BUILT) $(TESTS) $(FUZZ_REPLAY) $(MPI_CHECK)

%.o: %.c config.flags
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

# position-independent objects for libcanaryhost.so
%.pic.o: %.c config.flags
	$(CC) $(CFLAGS_ALL) -fPIC -c -o $@ $<

emu/main.o: TARGET_CFLAGS = -DCANARY_VERSION='"$(VERSION)"'

$(LIBEMU): $(EMU_OBJ)
	rm -f $@
	ar rcs $@ $^

emu/canary-emu: emu/main.o $(LIBEMU) $(LIBHOST_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

bench/engine: bench/engine.o $(LIBEMU) $(LIBHOST_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

t/%.t: t/%.o $(LIBEMU) $(LIBHOST_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

# make check: build everything, run the TAP suite with prove: tests in
# parallel, then the ones that measure wall-clock time alone (*-wall*.t), so
# that other tests do not steal their cores.
# TESTS_ONLY='t/00*.t' narrows it (CI uses that for ThreadSanitizer).
CHECK_TESTS = $(if $(TESTS_ONLY),$(wildcard $(TESTS_ONLY)),$(TESTS) $(SCRIPT_TESTS))
SERIAL_TESTS = $(filter %wallclock.t,$(CHECK_TESTS))
PAR_TESTS = $(filter-out $(SERIAL_TESTS),$(CHECK_TESTS))

# the programs build in parallel, one job per core, unless make was given -j itself
NPROC := $(shell nproc 2>/dev/null || echo 1)
check:
	$(MAKE) --no-print-directory $(if $(findstring j,$(filter-out --%,$(MAKEFLAGS))),,-j$(NPROC)) all
	$(PROVE) $(PROVE_FLAGS) $(PAR_TESTS)
	$(if $(SERIAL_TESTS),$(PROVE) $(SERIAL_TESTS))


bench: $(PROGS)
	bench/run-quick

# the whole evaluation of the paper (long: see bench/README.md) into a new
# directory bench/results/paper-DATE-TIME with its means and plots;
# SEEDS="1 2 3 4 5", JOBS=N: N runs side by side (bench/lib.sh)
bench-paper: $(PROGS)
	bench/paper.sh

run: $(PROGS)
	emu/canary-emu $(RUN_ARGS)

# make install [PREFIX=DIR] [DESTDIR=STAGE]: the tool, libcanaryhost (static,
# shared with its soname links, header, pkg-config file), the man pages,
# libcanarympi.so (an MPI was found) and its page;
# make uninstall removes exactly those files.
INSTALLED = $(BINDIR)/canary-emu $(BINDIR)/canary-allreduce $(MANDIR)/man1/canary-allreduce.1 $(LIBDIR)/libcanaryhost.a $(LIBDIR)/libcanaryhost.so.$(LH_VERSION) \
	$(LIBDIR)/$(LH_SONAME) $(LIBDIR)/libcanaryhost.so $(INCLUDEDIR)/canary_host.h \
	$(PKGCONFIGDIR)/canaryhost.pc $(MANDIR)/man1/canary-emu.1 $(MANDIR)/man3/libcanaryhost.3 \
	$(if $(MPI_SO),$(LIBDIR)/libcanarympi.so $(MANDIR)/man7/libcanarympi.7) \
	$(SHAREDIR)/wireshark/canary.lua $(SHAREDIR)/examples/loopback.c $(addprefix $(SHAREDIR)/,$(wildcard topologies/*.topo))

# the directories install creates; those that did not exist before (and
# their parents) are listed in $(CREATED), which uninstall removes when empty
INSTALL_DIRS = $(BINDIR) $(LIBDIR) $(INCLUDEDIR) $(PKGCONFIGDIR) $(MANDIR)/man1 $(MANDIR)/man3 \
	$(if $(MPI_SO),$(MANDIR)/man7) $(SHAREDIR)/wireshark $(SHAREDIR)/examples $(SHAREDIR)/topologies
CREATED = $(SHAREDIR)/installed-dirs

install: $(PROGS) $(LIBS_BUILT) libhost/canaryhost.pc.in emu/canary-emu.1 libhost/tools/canary-allreduce.1 libhost/libcanaryhost.3
	@new=$$(for d in $(INSTALL_DIRS); do while [ -n "$$d" ] && [ ! -d "$(DESTDIR)$$d" ]; do echo "$$d"; d=$${d%/*}; done; \
		done | sort -u); \
	old=$$(cat "$(DESTDIR)$(CREATED)" 2>/dev/null || true); \
	install -d $(addprefix $(DESTDIR),$(INSTALL_DIRS)) && \
	printf '%s\n' $$old $$new | sed '/^$$/d' | sort -u > "$(DESTDIR)$(CREATED)"
	install -m 755 emu/canary-emu $(DESTDIR)$(BINDIR)/canary-emu
	install -m 755 libhost/tools/canary-allreduce $(DESTDIR)$(BINDIR)/canary-allreduce
	install -m 644 $(LIBHOST_A) $(DESTDIR)$(LIBDIR)/libcanaryhost.a
	install -m 755 $(LIBHOST_SO) $(DESTDIR)$(LIBDIR)/libcanaryhost.so.$(LH_VERSION)
	ln -sf libcanaryhost.so.$(LH_VERSION) $(DESTDIR)$(LIBDIR)/$(LH_SONAME)
	ln -sf $(LH_SONAME) $(DESTDIR)$(LIBDIR)/libcanaryhost.so
	install -m 644 $(LIBHOST_HDR) $(DESTDIR)$(INCLUDEDIR)/canary_host.h
	sed -e 's|@prefix@|$(PREFIX)|; s|@libdir@|$(LIBDIR)|; s|@includedir@|$(INCLUDEDIR)|; s|@version@|$(LH_VERSION)|' \
		libhost/canaryhost.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/canaryhost.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/canaryhost.pc
	install -m 644 emu/canary-emu.1 $(DESTDIR)$(MANDIR)/man1/canary-emu.1
	install -m 644 libhost/tools/canary-allreduce.1 $(DESTDIR)$(MANDIR)/man1/canary-allreduce.1
	install -m 644 libhost/libcanaryhost.3 $(DESTDIR)$(MANDIR)/man3/libcanaryhost.3
ifneq ($(MPI_SO),)
	install -m 755 $(MPI_SO) $(DESTDIR)$(LIBDIR)/libcanarympi.so
	install -m 644 libhost/mpi/libcanarympi.7 $(DESTDIR)$(MANDIR)/man7/libcanarympi.7
endif
	install -m 644 hw/wireshark/canary.lua $(DESTDIR)$(SHAREDIR)/wireshark/canary.lua
	install -m 644 libhost/examples/loopback.c $(DESTDIR)$(SHAREDIR)/examples/loopback.c
	install -m 644 $(wildcard topologies/*.topo) $(DESTDIR)$(SHAREDIR)/topologies/
	@# the dynamic linker finds the new library only after ldconfig, in the directories it searches
	@case "$(DESTDIR):$(LIBDIR)" in :/usr/lib|:/usr/local/lib|:/usr/lib64|:/usr/local/lib64) \
		if [ "$$(id -u)" = 0 ]; then ldconfig; else echo "make install: run ldconfig as root to use $(LIBDIR)/$(LH_SONAME)"; fi ;; \
	esac

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@dirs=$$(cat "$(DESTDIR)$(CREATED)" 2>/dev/null || true); rm -f "$(DESTDIR)$(CREATED)"; \
	for d in $$(printf '%s\n' $$dirs $(addprefix $(SHAREDIR)/,wireshark examples topologies) $(SHAREDIR) | \
		sed '/^$$/d' | sort -ru); do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done

clean:
	rm -f $(OBJS) $(DEPS) $(LIBEMU) $(LIBS_BUILT) $(PROGS) $(TESTS) $(FUZZ_REPLAY) libhost/mpi/libcanarympi.so \
		libhost/mpi/*.o libhost/mpi/*.d t/mpi/mpi-check t/mpi/*.o t/mpi/*.d

distclean: clean fuzz-clean
	rm -f config.mk config.flags

-include $(DEPS)

# shmam - plain non-recursive GNU Makefile.  `make` builds the library and the
# launcher; `make check` installs missing Debian packages and runs the tests
# (`make check-core` the core suites only, `make check T=suite[:test]` one);
# `make run` runs the measurement suite (scripts/report.sh).  See README.md.

CC      ?= cc
PREFIX  ?= /usr/local
B       := build
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
           -pthread -MMD -MP

# Include paths per directory: each sees only what it may use.  include/ holds
# the public header; runtime internals (runtime/) are for the runtime and the
# tests and the tools (tools/); the lock library (locks/) for the runtime, its
# tests and lockbench.
INC_runtime := -Iinclude -Iruntime -Ilocks -Iheap -Ispsc
INC_locks   := -Ilocks
INC_heap    := -Iheap
INC_spsc    := -Ispsc
INC_tests   := -Iinclude -Iruntime -Ilocks -Iheap -Ispsc -Itests
INC_bench   := -Iinclude -Ilocks -Iheap -Ispsc -Ibench
INC_apps    := -Iinclude -Iapps
INC_net     := -Iinclude -Iruntime -Ilocks -Iheap -Ispsc
INC_tools   := -Iinclude -Iruntime -Ilocks -Iheap -Ispsc -Itools
INC_examples := -Iinclude
INC_compat  := -Iinclude -Icompat/gasnet
LDLIBS  := -latomic_ops -lrt -pthread
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt)

LOCK_SRC := $(wildcard locks/*.c)
HEAP_SRC := $(wildcard heap/*.c)
SPSC_SRC := $(wildcard spsc/*.c)
RT_SRC   := $(wildcard runtime/*.c)
LIB_OBJ  := $(patsubst %.c,$(B)/obj/%.o,$(LOCK_SRC) $(HEAP_SRC) $(SPSC_SRC) $(RT_SRC))
LIB      := $(B)/lib/libshmam.a
# libshmam-mpi: the same runtime with a transport between nodes over MPI
# (net/, built with mpicc) in place of runtime/net_none.c, for programs
# started with mpiexec (docs/guide/07-clusters.md).  Programs linked with it:
# tests/mpi_X.c -> build/tests/mpi_X, bench/clumps.c -> build/bench/clumps,
# apps/X.c -> build/apps/hyb_X.
NET_SRC  := $(wildcard net/*.c)
MPI_LIB_OBJ := $(filter-out $(B)/obj/runtime/net_none.o,$(LIB_OBJ)) \
               $(patsubst %.c,$(B)/obj/%.o,$(NET_SRC))
MPI_LIB  := $(B)/lib/libshmam-mpi.a
MPI_SO_NAME := libshmam-mpi.so.1
MPI_SO   := $(B)/lib/$(MPI_SO_NAME)
# The shared library: position-independent objects apart, the soname's major
# version, and a version script that exports exactly the am_ names
# include/shmam.h declares (functions and am_claim_names), nothing else.
SO_NAME  := libshmam.so.1
SO       := $(B)/lib/$(SO_NAME)
SO_MAP   := $(B)/lib/libshmam.map
PIC_OBJ  := $(patsubst %.c,$(B)/pic/%.o,$(LOCK_SRC) $(HEAP_SRC) $(SPSC_SRC) $(RT_SRC))
MPI_PIC_OBJ := $(filter-out $(B)/pic/runtime/net_none.o,$(PIC_OBJ)) \
               $(patsubst %.c,$(B)/pic/%.o,$(NET_SRC))
# libshmam-locks.so (locks/preload/): an unmodified program's pthread mutexes
# and condition variables replaced by a lock of locks/ (man/shmam-locks.7).
PRELOAD_SO  := $(B)/lib/libshmam-locks.so
PRELOAD_OBJ := $(patsubst %.c,$(B)/pic/%.o,$(LOCK_SRC) $(wildcard locks/preload/*.c))
PRELOAD_MAP := locks/preload/exports.map
RUN      := $(B)/bin/shmamrun
STAT     := $(B)/bin/shmamstat

TEST_SRC := $(wildcard tests/check_*.c)
TEST_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRC))
TEST_HELPER_SRC := $(wildcard tests/prog_*.c)
TEST_HELPER_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_HELPER_SRC))
TEST_COMMON := $(B)/obj/tests/testutil.o
HYB_TEST_SRC := $(wildcard tests/mpi_*.c)
HYB_TEST_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(HYB_TEST_SRC))

# bench/X.c -> build/bench/X; bench/mpi/X.c -> build/bench/mpi_X (built with mpicc);
# bench/common/*.c (measuring helpers) go into both, but am_*.c (which need
# libshmam) only into the shmam programs.
BENCH_COMMON := $(wildcard bench/common/*.c)
BENCH_COMMON_MPI := $(filter-out bench/common/am_%.c,$(BENCH_COMMON))
BENCH_COMMON_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(BENCH_COMMON))
BENCH_SRC := $(filter-out bench/clumps.c,$(wildcard bench/*.c))
BENCH_BIN := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
MPI_BENCH_SRC := $(wildcard bench/mpi/*.c)
MPI_BENCH_BIN := $(patsubst bench/mpi/%.c,$(B)/bench/mpi_%,$(MPI_BENCH_SRC))

# apps/splitc/*.c -> build/lib/libsplitc.a (the Split-C-like layer);
# apps/common/*.c -> build/lib/libappcommon.a (the applications' local kernels,
# free of any communication, shared by the shmam and MPI versions);
# apps/X.c -> build/apps/X; apps/mpi/X.c -> build/apps/mpi_X (mpicc).
SPLITC_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard apps/splitc/*.c))
SPLITC_LIB := $(B)/lib/libsplitc.a
COMMON_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard apps/common/*.c))
COMMON_LIB := $(B)/lib/libappcommon.a
APP_SRC := $(wildcard apps/*.c)
APP_BIN := $(patsubst apps/%.c,$(B)/apps/%,$(APP_SRC))
MPI_APP_SRC := $(wildcard apps/mpi/*.c)
MPI_APP_BIN := $(patsubst apps/mpi/%.c,$(B)/apps/mpi_%,$(MPI_APP_SRC))
APP_LIBS := -lfftw3 -lm
MPICC ?= mpicc
MPI_OPT := -O2 -g # never sanitized: LeakSanitizer would report MPICH's own allocations
HYB_APP_BIN := $(patsubst apps/%.c,$(B)/apps/hyb_%,$(filter-out apps/splitc_selftest.c,$(APP_SRC)))
HYB_BENCH_BIN := $(if $(wildcard bench/clumps.c),$(B)/bench/clumps)
# compat/gasnet/: the GASNet-EX core API over shmam's public API, as
# libgasnet-shmam (.a, and a .so over libshmam.so exporting the gex_ and
# gasnet_ names only); compat/gasnet/tests/X.c -> build/gasnet/X, GASNet-EX
# programs that check_gasnet runs under shmamrun.
GASNET_LIB := $(B)/lib/libgasnet-shmam.a
GASNET_SO_NAME := libgasnet-shmam.so.1
GASNET_SO := $(B)/lib/$(GASNET_SO_NAME)
GASNET_HDR := $(wildcard compat/gasnet/*.h)
GASNET_PROG := $(patsubst compat/gasnet/tests/%.c,$(B)/gasnet/%,$(wildcard compat/gasnet/tests/*.c))
# examples/X.c -> build/examples/X: small programs that show one use.
EXAMPLE_BIN := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
PROGRAMS := $(EXAMPLE_BIN) $(GASNET_PROG) $(BENCH_BIN) $(B)/bench/heap_boost $(B)/bench/spsc_boost $(MPI_BENCH_BIN) \
            $(APP_BIN) $(MPI_APP_BIN) $(MPI_LIB) $(MPI_SO) $(HYB_APP_BIN) $(HYB_BENCH_BIN) $(HYB_TEST_BIN)

.PHONY: all mpi deps deps-core programs check check-build check-run check-core bench-check \
        run bench stress asan tsan clean install install-man check-python
all: $(LIB) $(SO) $(PRELOAD_SO) $(RUN) $(STAT) $(GASNET_LIB) $(GASNET_SO) python/shmam/_cdef.py
mpi: $(MPI_LIB) $(MPI_SO)

deps:
	@scripts/deps.sh

deps-core:
	@scripts/deps.sh core

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INC_$(firstword $(subst /, ,$*))) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC $(INC_$(firstword $(subst /, ,$*))) -c $< -o $@

# net/ talks MPI: mpicc, with the runtime's flags (sanitizers included).
$(B)/obj/net/%.o: net/%.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(INC_net) -c $< -o $@

$(MPI_LIB): $(MPI_LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/pic/net/%.o: net/%.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -fPIC $(INC_net) -c $< -o $@

$(MPI_SO): $(MPI_PIC_OBJ) $(SO_MAP)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -shared -Wl,-soname,$(MPI_SO_NAME) -Wl,--version-script=$(SO_MAP) \
	  $(MPI_PIC_OBJ) -o $@ $(LDLIBS)
	ln -sf $(MPI_SO_NAME) $(B)/lib/libshmam-mpi.so

# Programs over libshmam-mpi, compiled and linked by mpicc (they may call MPI
# too: bench/clumps times MPI's own ping-pong beside shmam's).
$(B)/obj/tests/mpi_%.o: tests/mpi_%.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(INC_tests) -c $< -o $@

$(B)/obj/bench/clumps.o: bench/clumps.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(INC_bench) -c $< -o $@

$(B)/tests/mpi_%: $(B)/obj/tests/mpi_%.o $(TEST_COMMON) $(MPI_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $^ -o $@ $(CHECK_LIBS) $(LDLIBS) -lm

$(B)/bench/clumps: $(B)/obj/bench/clumps.o $(BENCH_COMMON_OBJ) $(MPI_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lm

$(B)/apps/hyb_%: $(B)/obj/apps/%.o $(SPLITC_LIB) $(COMMON_LIB) $(MPI_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $^ -o $@ $(APP_LIBS) $(LDLIBS)

$(SO_MAP): include/shmam.h
	@mkdir -p $(@D)
	{ echo '{ global:'; sed -n 's/.*\b\(am_[a-z_]*\) *[(\[].*/  \1;/p' $< | sort -u; \
	  echo '  local: *; };'; } > $@

$(PRELOAD_SO): $(PRELOAD_OBJ) $(PRELOAD_MAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -Wl,--version-script=$(PRELOAD_MAP) $(PRELOAD_OBJ) -o $@ $(LDLIBS)

$(SO): $(PIC_OBJ) $(SO_MAP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SO_NAME) -Wl,--version-script=$(SO_MAP) \
	  $(PIC_OBJ) -o $@ $(LDLIBS)
	ln -sf $(SO_NAME) $(B)/lib/libshmam.so

$(GASNET_LIB): $(B)/obj/compat/gasnet/gasnet_shmam.o
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(GASNET_SO): $(B)/pic/compat/gasnet/gasnet_shmam.o $(SO)
	@mkdir -p $(@D)
	{ echo '{ global: gex_*; gasnet_*;'; echo '  local: *; };'; } > $(B)/lib/libgasnet-shmam.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(GASNET_SO_NAME) \
	  -Wl,--version-script=$(B)/lib/libgasnet-shmam.map $< -o $@ -L$(B)/lib -lshmam $(LDLIBS)
	ln -sf $(GASNET_SO_NAME) $(B)/lib/libgasnet-shmam.so

$(B)/gasnet/%: compat/gasnet/tests/%.c $(GASNET_HDR) $(GASNET_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INC_compat) $< -o $@ $(GASNET_LIB) $(LIB) $(LDLIBS)

$(B)/tests/check_gasnet: | $(GASNET_PROG)

# A test program linked against the shared library (check_abi runs it).
$(B)/tests/prog_dyn: $(B)/obj/tests/prog_dyn.o $(SO)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -L$(B)/lib -lshmam -Wl,-rpath,'$$ORIGIN/../lib'

# The tools (tools/): the launcher with its guardian, and shmamstat.
$(RUN): $(B)/obj/tools/shmamrun.o $(B)/obj/tools/guardian.o $(LIB)
$(STAT): $(B)/obj/tools/shmamstat.o $(LIB)
$(RUN) $(STAT):
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(B)/tests/%: $(B)/obj/tests/%.o $(TEST_COMMON) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(CHECK_LIBS) $(LDLIBS)

# check_loggp runs the LogGP benchmarks: built with it (also in a mutant's tree);
# it links the benchmarks' round estimator (bench/common/loggp.c) to test it
$(B)/tests/check_loggp: $(patsubst %,$(B)/obj/bench/common/%.o,loggp measure stat) \
    | $(B)/bench/loggp $(B)/bench/mpi_loggp
$(B)/obj/tests/check_loggp.o: CFLAGS += -Ibench
# check_bench: its locks_programs test preloads the library into Debian programs
# and asks lockbench for the locks; robust is the multi-process program.
$(B)/tests/check_bench: | $(PRELOAD_SO) $(B)/bench/lockbench $(B)/bench/robust
# check_preload runs prog_preload and xz under the preload library.
$(B)/tests/check_preload: | $(PRELOAD_SO) $(B)/tests/prog_preload
# check_examples runs the examples (C, and Python over the shared library)
# under the launcher, as the docs that show them say.
$(B)/tests/check_examples: | $(EXAMPLE_BIN) $(RUN) $(SO) python/shmam/_cdef.py
# check_rendezvous runs rdvbench at a tiny size, and shmamstat.
$(B)/tests/check_rendezvous: | $(B)/bench/rdvbench $(STAT)

$(B)/examples/%: $(B)/obj/examples/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(B)/bench/%: $(B)/obj/bench/%.o $(BENCH_COMMON_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lm

# rpcbench: its transports (bench/rpc/*.c) beside it; ZeroMQ for it alone.
RPC_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard bench/rpc/*.c))
$(B)/bench/rpcbench: $(B)/obj/bench/rpcbench.o $(RPC_OBJ) $(BENCH_COMMON_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lzmq -lm

# heapbench's baseline, Boost.Interprocess (C++, header-only).
$(B)/bench/heap_boost: bench/heap_boost.cpp bench/common/heapmix.h bench/common/place.h
	@mkdir -p $(@D)
	$(CXX) -O2 -g -std=c++17 -Wall -Wextra -Ibench $< -o $@ -lrt -pthread

# spscbench's baseline, Boost.Lockfree's spsc_queue (C++, header-only).
$(B)/bench/spsc_boost: bench/spsc_boost.cpp bench/common/place.h
	@mkdir -p $(@D)
	$(CXX) -O2 -g -std=c++17 -Wall -Wextra -Ibench $< -o $@ -pthread

$(B)/bench/mpi_%: bench/mpi/%.c $(BENCH_COMMON_MPI) $(wildcard bench/common/*.h)
	@mkdir -p $(@D)
	$(MPICC) $(MPI_OPT) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude -Ibench $< \
	  $(BENCH_COMMON_MPI) -o $@ -lm

$(SPLITC_LIB): $(SPLITC_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(COMMON_LIB): $(COMMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/apps/%: $(B)/obj/apps/%.o $(SPLITC_LIB) $(COMMON_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(APP_LIBS) $(LDLIBS)

# The common kernels are linked unsanitized into MPI programs: build them apart.
$(B)/apps/mpi_%: apps/mpi/%.c $(wildcard apps/common/*.c apps/common/*.h)
	@mkdir -p $(@D)
	$(MPICC) $(MPI_OPT) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iapps $< \
	  $(wildcard apps/common/*.c) -o $@ $(APP_LIBS)

programs: all $(PROGRAMS)

# The suites whose endpoints take the queue kind from the environment run again
# under each per-sender channel kind (scripts/run-tests.sh KIND:suite), with one
# claim algorithm; the applications' suites under one kind.  check_chan covers
# what is particular to channels (crashes, corruption, recycling, the summary).
CHAN_KINDS  := lamport fastforward mcring bqueue
CHAN_SUITES := check_delivery check_rpc check_wait check_deadlock check_long check_try check_loan
CHAN_RERUNS := $(foreach k,$(CHAN_KINDS),$(addprefix $(k):$(B)/tests/,$(CHAN_SUITES))) \
               $(addprefix bqueue:$(B)/tests/,check_splitc check_fft check_con)

# Tiers.  check-core: the suites of the runtime's own layers (the locks, the
# SPSC rings, the shared heap and its FIFO, segments, and the runtime's
# waiting), which need only libatomic_ops and Check (scripts/deps.sh core) and
# run no other program; check_delivery and check_config (a minute or more
# each, by design: timed runs over every combination) are left to check.  check: every suite,
# the channel reruns and the report's unit tests (check-build, then
# check-run, which scripts/flake.sh repeats), and the Python package's tests
# (check-python).  T=suite or T=suite:name (the
# suite's name with or without check_; name a test function or a tcase, as
# SHMAM_TEST, tests/testutil.h) runs one suite, or one test or tcase of it, in
# place of them all.
CORE_SUITES := $(addprefix $(B)/tests/check_,locks spsc heap fifo segment wait)
T_SUITE := $(if $(T),$(B)/tests/check_$(patsubst check_%,%,$(firstword $(subst :, ,$(T)))))
T_CASE  := $(if $(findstring :,$(T)),$(patsubst $(firstword $(subst :, ,$(T))):%,%,$(T)))

check: deps
	@$(if $(T),,scripts/format.sh)
	@$(MAKE) --no-print-directory check-build
	@$(MAKE) --no-print-directory check-run

check-build:
	@$(MAKE) --no-print-directory programs $(TEST_BIN) $(TEST_HELPER_BIN)

check-run:
ifeq ($(T),)
	@scripts/run-tests.sh $(TEST_BIN) $(CHAN_RERUNS)
	@python3 -m unittest discover -s scripts/report -p 'test_*.py'
	@$(MAKE) --no-print-directory check-python
else
	@$(if $(T_CASE),SHMAM_TEST='$(T_CASE)' )scripts/run-tests.sh $(T_SUITE)
endif

# The Python package (python/: Debian's /usr/bin/python3, python3-cffi and
# python3-pytest): its tests load this build's libshmam.so.1 and run the C
# peers of tests/prog_pypeer.  Not under sanitizers: an instrumented shared
# library cannot be loaded into an uninstrumented interpreter.
PYTHON := /usr/bin/python3
PY_SITE := $(PREFIX)/lib/python3/dist-packages

# The package's cffi declarations, made from the header (python/gencdef.py,
# with cffi's pycparser); without them a C-only build goes on, and says so.
python/shmam/_cdef.py: include/shmam.h python/gencdef.py
	@if $(PYTHON) -c 'import pycparser' 2>/dev/null; then \
	    echo "python/gencdef.py include/shmam.h > $@"; \
	    CC='$(CC)' $(PYTHON) python/gencdef.py include/shmam.h > $@.tmp && mv $@.tmp $@; \
	else echo "shmam: no pycparser for $(PYTHON) (python3-cffi): Python package not made"; fi

check-python: $(SO) $(RUN) $(B)/tests/prog_pypeer python/shmam/_cdef.py
ifneq ($(findstring sanitize,$(OPT)),)
	@echo "check-python: skipped in a sanitized build"
else
	@SHMAM_BUILD=$(B) SHMAM_LIBRARY=$(abspath $(SO)) $(PYTHON) -m pytest -q -p no:cacheprovider python/tests
endif

check-core: deps-core
	@$(MAKE) --no-print-directory $(STAT) $(CORE_SUITES)
	@scripts/run-tests.sh $(CORE_SUITES)

# The figures' physical consistency (LogP's relations), judged by the
# report's verdict engine: a measurement, never a gate (scripts/bench-check.sh).
bench-check: deps
	@$(MAKE) --no-print-directory $(RUN) $(B)/bench/logp $(B)/bench/rtt
	@B=$(B) scripts/bench-check.sh

run: deps
	@$(MAKE) --no-print-directory programs
	@scripts/report.sh

bench: deps
	@$(MAKE) --no-print-directory programs
	@scripts/bench.sh

# Iterations times STRESS, and (Check's multiplier) every test's timeout too.
STRESS ?= 10
stress: deps
	@$(MAKE) --no-print-directory programs $(TEST_BIN) $(TEST_HELPER_BIN)
	@SHMAM_STRESS=$(STRESS) CK_TIMEOUT_MULTIPLIER=$(STRESS) scripts/run-tests.sh $(TEST_BIN)

asan:
	@$(MAKE) --no-print-directory B=build-asan OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  LDLIBS="-latomic_ops -lrt -pthread -fsanitize=address,undefined" check

tsan: deps
	@$(MAKE) --no-print-directory B=build-tsan OPT="-O1 -fsanitize=thread -Wno-tsan" \
	  LDLIBS="-latomic_ops -lrt -pthread -fsanitize=thread" build-tsan/tests/tsan_threads
	build-tsan/tests/tsan_threads

$(B)/tests/tsan_threads: $(B)/obj/tests/tsan_threads.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

.PHONY: fuzz format mutants
# Every promise's test fails when the code behind it breaks (tests/README.md's
# index, tests/mutants.txt): each mutant on a scratch copy of the tree.
mutants: deps
	@/usr/bin/python3 scripts/mutants.py

fuzz:
	@scripts/fuzz.sh

format:
	@scripts/format.sh -i

# libshmam-mpi is built and installed only where $(MPICC) exists (MPICH or
# another MPI); without it, install says so and installs the rest.
HAVE_MPICC := $(shell command -v $(MPICC) 2>/dev/null)

install: all $(if $(HAVE_MPICC),mpi)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/shmam.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SO) $(PRELOAD_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(SO_NAME) $(DESTDIR)$(PREFIX)/lib/libshmam.so
ifneq ($(HAVE_MPICC),)
	install -m 644 $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(MPI_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(MPI_SO_NAME) $(DESTDIR)$(PREFIX)/lib/libshmam-mpi.so
	sed 's|@PREFIX@|$(PREFIX)|' scripts/shmam-mpi.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/shmam-mpi.pc
else
	@echo "shmam: $(MPICC) not found: libshmam-mpi (MPI between nodes) not built nor installed"
endif
	install -d $(DESTDIR)$(PREFIX)/include/shmam-gasnet
	install -m 644 $(GASNET_HDR) $(DESTDIR)$(PREFIX)/include/shmam-gasnet/
	install -m 644 $(GASNET_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(GASNET_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(GASNET_SO_NAME) $(DESTDIR)$(PREFIX)/lib/libgasnet-shmam.so
	sed 's|@PREFIX@|$(PREFIX)|' scripts/shmam-gasnet.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/shmam-gasnet.pc
	install -m 755 $(RUN) $(STAT) $(DESTDIR)$(PREFIX)/bin/
	sed 's|@PREFIX@|$(PREFIX)|' scripts/shmam.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/shmam.pc
	install -d $(DESTDIR)$(PY_SITE)/shmam
	install -m 644 python/shmam/*.py $(DESTDIR)$(PY_SITE)/shmam/
	echo 'LIBDIR = "$(PREFIX)/lib"  # written by make install' > $(DESTDIR)$(PY_SITE)/shmam/_installed.py
	@$(MAKE) --no-print-directory install-man

# The manual: shmam(3) and a page per group of calls (man/man3/, each named
# for its first call), every other call a page's NAME section names being a
# .so link to it, so that `man am_call_start` opens am_call(3).  check_man
# installs it into a scratch directory and opens every call's page.
MAN3_PAGES := $(wildcard man/man3/*.3)
MAN_DIR = $(DESTDIR)$(PREFIX)/share/man
install-man:
	install -d $(MAN_DIR)/man1 $(MAN_DIR)/man3 $(MAN_DIR)/man7
	install -m 644 man/shmamrun.1 man/shmamstat.1 $(MAN_DIR)/man1/
	install -m 644 man/shmam.3 $(MAN3_PAGES) $(MAN_DIR)/man3/
	install -m 644 man/shmam-python.7 man/shmam-gasnet.7 man/shmam-locks.7 $(MAN_DIR)/man7/
	@for p in $(MAN3_PAGES); do page=$$(basename $$p); \
	  for n in $$(sed -n '/^\.SH NAME/,/\\-/{/^\.SH/d;s/\\-.*//;s/,/ /g;p;}' $$p); do \
	    [ "$$n.3" = "$$page" ] || echo ".so man3/$$page" > $(MAN_DIR)/man3/$$n.3; \
	  done; done

clean:
	rm -rf build build-asan build-tsan python/shmam/_cdef.py

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# Goblin Store: one build, one test command.
#   make            build the programs, the test drivers and benchmark tools
#   make run        install what goblind needs, build, start goblind on
#                   ./var/store in the foreground
#   make test       install what the tests need, build, run every test
#   make bench      install what the benchmarks need, run them (long; results
#                   under bench/results/)
#   make fuzz       build the libFuzzer targets (clang)
#   make fuzz-long  run each of them FUZZ_TIME=600 s, two at once, grow the corpora
#   make install    PREFIX=/usr/local, DESTDIR honoured; make uninstall
#   make deps       install the packages of make run and make test
#                   (deps-build, deps-run, deps-test, deps-bench: one purpose each)
# Knobs: OPT=-O0, DEBUG=, SANITIZE=address,undefined, DEVELOPER=1 (-Werror), V=1

CC ?= cc
OPT ?= -O2
DEBUG ?= -g
WARN = -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
       -Wmissing-declarations -Wwrite-strings -Wvla -Wformat-security \
       -fno-common
STD = -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64
ifneq ($(DEVELOPER)$(CI),)
WARN += -Werror
endif
ifneq ($(SANITIZE),)
SAN = -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT = -O1
endif
FINAL_CFLAGS = $(STD) $(WARN) $(OPT) $(DEBUG) $(SAN) $(CFLAGS) -MMD -MP
FINAL_LDFLAGS = $(SAN) $(LDFLAGS)
LIBS = -luring -lxxhash -lnuma -lpthread
# RDMA verbs (netd/rdma*.c, goblinctl --transport rdma): BUILD_DEPS has them
RDMA_LIBS = -lrdmacm -libverbs
# The fuzz targets need clang's libFuzzer runtime: the clang and the
# runtime package of one version (Debian 12's clang is 14).
CLANG ?= clang-14
# The house style is .clang-format's.  clang-format's output changes from
# one version to the next, so the check uses Debian 12's.
CLANG_FORMAT ?= clang-format-14
FORMAT_SRC = $(sort $(shell find store netd fs cli bench test -name '*.[ch]'))

ifeq ($(V),)
Q = @
QCC = @printf '  CC   %s\n' $@;
QLD = @printf '  LD   %s\n' $@;
QAR = @printf '  AR   %s\n' $@;
endif

B = build
STORE_SRC = $(wildcard store/*.c)
STORE_OBJ = $(STORE_SRC:%.c=$(B)/%.o)
# libgoblin-origin: the HTTP origin client both mirrors link (libcurl)
ORIGIN_SRC = $(wildcard store/origin/*.c)
ORIGIN_OBJ = $(ORIGIN_SRC:%.c=$(B)/%.o)
CLI_SRC = $(wildcard cli/*.c)
CLI_OBJ = $(CLI_SRC:%.c=$(B)/%.o)
FS_SRC = $(wildcard fs/*.c)
FS_OBJ = $(FS_SRC:%.c=$(B)/%.o)
NETD_SRC = $(wildcard netd/*.c)
NETD_OBJ = $(NETD_SRC:%.c=$(B)/%.o)
# goblind links the filesystem for --mount, less goblinfs's main()
FS_LIB_OBJ = $(filter-out $(B)/fs/main.o,$(FS_OBJ))
# Asked of pkg-config when a recipe first needs them, not while the
# Makefile is read: on a fresh machine libfuse3-dev arrives with deps-build.
FUSE_CFLAGS = $(eval FUSE_CFLAGS := $(shell pkg-config --cflags fuse3))$(FUSE_CFLAGS)
FUSE_LIBS = $(eval FUSE_LIBS := $(shell pkg-config --libs fuse3))$(FUSE_LIBS)
UNIT_SRC = $(wildcard test/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:test/unit/%.c=$(B)/test/%)
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(B)/bench/%)

# The programs; `make` also builds the test and benchmark drivers but the
# RocksDB comparison, which needs librocksdb (deps-bench) and only `make bench`
# builds.
PROGRAMS = $(B)/libgoblin.a $(B)/libgoblin-origin.a $(B)/goblinctl $(B)/goblinfs $(B)/goblind
BENCH_ROCKS = $(B)/bench/vsrocks
all: $(PROGRAMS) $(filter-out $(BENCH_ROCKS),$(BENCH_BIN))
programs: $(PROGRAMS)

# Debian packages, one list per purpose; each target installs only its own.
# build: compile and link the three programs
BUILD_DEPS = build-essential pkg-config liburing-dev libxxhash-dev \
	     libnuma-dev fuse3 libfuse3-dev libcurl4-openssl-dev libinih-dev \
	     libhttp-parser-dev libibverbs-dev librdmacm-dev
# run: the clients the README's commands use (nc, curl, memccp, getfattr)
RUN_DEPS = netcat-openbsd curl libmemcached-tools attr
# test: unit and fuzz frameworks, reference servers and real clients
TEST_DEPS = libcmocka-dev bats python3 python3-pymemcache python3-requests \
	    clang-14 libclang-rt-14-dev clang-format-14 time fio memcached \
	    libmemcached-tools nutcracker netcat-openbsd curl attr iproute2 \
	    procps prometheus groff-base nodejs $(HCT_NPM) nginx-light \
	    redis-server redis-tools python3-redis git rsync ccache \
	    $(RDMA_VM_DEPS)
# the Soft-RoCE guest of test/rdma-vm (76-rdma.bats): QEMU, Debian's
# kernel (rdma_rxe), rdma-core and its tools
RDMA_VM_DEPS = qemu-system-x86 linux-image-amd64 rdma-core \
	       ibverbs-providers ibverbs-utils rdmacm-utils perftest busybox \
	       cpio e2fsprogs
# Debian's npm, unless an npm is there already: NodeSource's nodejs
# bundles its own and conflicts with Debian's package
HCT_NPM = $(if $(shell command -v npm 2>/dev/null),,npm)
# bench: the peers compared with and the tools that draw the results
BENCH_DEPS = librocksdb-dev gnuplot-nox varnish nginx-light memcached fio \
	     time python3 curl redis-server

# $(call apt_install,PACKAGES,PURPOSE): install those of PACKAGES not
# installed yet.  Debian's postinst scripts would start memcached, nginx,
# varnish and Prometheus on the ports goblind and its tests use: while apt
# runs, a policy-rc.d that answers 101 (Debian's convention for chroots and
# image builds) keeps every service from starting, an admin's own
# policy-rc.d being set aside meanwhile and put back after; the services of
# the packages installed here are then disabled, so a reboot does not start
# them either.
define apt_install
	@missing=; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	[ -n "$$missing" ] || exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "make: these packages are missing:$$missing" >&2; \
	  echo "make: run make as root once, or apt-get install them" >&2; exit 1; \
	fi; \
	echo "installing:$$missing"; \
	prc=/usr/sbin/policy-rc.d; saved=$$prc.goblin-saved; \
	[ ! -e $$prc ] || mv -f $$prc $$saved || exit 1; \
	restore() { rm -f $$prc; [ ! -e $$saved ] || mv -f $$saved $$prc; }; \
	trap 'restore; exit 130' INT TERM; \
	printf '#!/bin/sh\n# make deps (goblin): no service starts while it installs\nexit 101\n' >$$prc; \
	chmod 755 $$prc; \
	installed() { dpkg-query -W -f='$${db:Status-Status} $${Package}\n' | \
	  sed -n 's/^installed //p' | sort; }; \
	before=$$(mktemp); installed >$$before; \
	apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; rc=$$?; \
	restore; trap - INT TERM; \
	new=$$(installed | comm -13 $$before -); rm -f $$before; \
	[ $$rc = 0 ] || exit $$rc; \
	for p in $$new; do \
	  for u in $$(dpkg -L $$p 2>/dev/null | sed -n 's|^/lib/systemd/system/\([^/@]*\.service\)$$|\1|p'); do \
	    if command -v systemctl >/dev/null 2>&1 && systemctl -q is-enabled $$u 2>/dev/null; then \
	      systemctl -q disable $$u 2>/dev/null && echo "make: disabled $$u (installed for goblin's $(2); systemctl enable $$u to keep it)"; \
	    fi; \
	  done; \
	  for s in $$(dpkg -L $$p 2>/dev/null | sed -n 's|^/etc/init.d/\([^/]*\)$$|\1|p'); do \
	    update-rc.d $$s disable >/dev/null 2>&1 || true; \
	  done; \
	done
endef

deps-build:
	$(call apt_install,$(BUILD_DEPS),build)
deps-run:
	$(call apt_install,$(RUN_DEPS),README commands)
deps-test:
	$(call apt_install,$(TEST_DEPS),tests)
deps-bench:
	$(call apt_install,$(BENCH_DEPS),benchmarks)
deps:
	$(call apt_install,$(BUILD_DEPS) $(RUN_DEPS) $(TEST_DEPS),build and tests)

# Rebuild everything when the flags change (SANITIZE=, OPT=, ...): the
# stamp holds the last flags and is rewritten only when they differ, by a
# recipe (make reads its date after running it), never while parsing.
FLAGS_STAMP = $(B)/.flags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(B)
	@echo '$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS)' | cmp -s - $@ || \
	 echo '$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS)' >$@

$(B)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(FINAL_CFLAGS) -c $< -o $@

$(B)/libgoblin.a: $(STORE_OBJ)
	$(QAR)rm -f $@ && ar rcs $@ $^

$(B)/libgoblin-origin.a: $(ORIGIN_OBJ)
	$(QAR)rm -f $@ && ar rcs $@ $^

# goblinctl speaks goblin's binary protocol through netd's codec (issue 22)
# and encodes memcache's base64 keys with goblind's
$(B)/goblinctl: $(CLI_OBJ) $(B)/netd/gproto.o $(B)/netd/mc_proto.o \
		$(B)/libgoblin.a
	$(QLD)$(CC) $(FINAL_LDFLAGS) -o $@ $(CLI_OBJ) $(B)/netd/gproto.o \
	    $(B)/netd/mc_proto.o $(B)/libgoblin.a $(LIBS) $(RDMA_LIBS) -lm

$(B)/fs/%.o: fs/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) -c $< -o $@

$(B)/goblinfs: $(FS_OBJ) $(B)/libgoblin-origin.a $(B)/libgoblin.a
	$(QLD)$(CC) $(FINAL_LDFLAGS) -o $@ $(FS_OBJ) $(B)/libgoblin-origin.a \
	    $(B)/libgoblin.a $(LIBS) $(FUSE_LIBS) -lcurl

$(B)/netd/%.o: netd/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) -c $< -o $@

$(B)/goblind: $(NETD_OBJ) $(FS_LIB_OBJ) $(B)/libgoblin-origin.a $(B)/libgoblin.a
	$(QLD)$(CC) $(FINAL_LDFLAGS) -o $@ $(NETD_OBJ) $(FS_LIB_OBJ) \
	    $(B)/libgoblin-origin.a $(B)/libgoblin.a $(LIBS) $(FUSE_LIBS) -lcurl -linih -lhttp_parser \
	    $(RDMA_LIBS)

# the memcache parser is pure: its test links it alone
$(B)/test/test_mc_proto: test/unit/test_mc_proto.c $(B)/netd/mc_proto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/mc_proto.o -lcmocka

# and the RESP parser (issue 23)
$(B)/test/test_resp_proto: test/unit/test_resp_proto.c $(B)/netd/resp_proto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/resp_proto.o -lcmocka -lm

# and goblin's binary protocol codec (issue 22)
$(B)/test/test_gproto: test/unit/test_gproto.c $(B)/netd/gproto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/gproto.o -lcmocka

# so is the HTTP head parser, on Debian's libhttp-parser
$(B)/test/test_http_proto: test/unit/test_http_proto.c $(B)/netd/http_proto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/http_proto.o -lhttp_parser -lcmocka

# and the HTTP semantics (dates, ranges, conditionals, caching) need nothing
SEM_TEST_OBJ = $(B)/netd/http_sem.o $(B)/store/origin/rfc9111.o $(B)/store/httpdate.o
$(B)/test/test_http_sem: test/unit/test_http_sem.c $(SEM_TEST_OBJ)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(SEM_TEST_OBJ) -lcmocka

# the staleness rules are rfc9111.c's: pure as well
$(B)/test/test_stale: test/unit/test_stale.c $(B)/store/origin/rfc9111.o $(B)/store/httpdate.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -iquote store/origin $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/store/origin/rfc9111.o $(B)/store/httpdate.o -lcmocka

# the guard's reading of mountinfo: guard.c alone
$(B)/test/test_guard: test/unit/test_guard.c $(B)/fs/guard.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) -iquote fs $(FINAL_LDFLAGS) \
	    -o $@ $< $(B)/fs/guard.o -lcmocka

# the origin fetcher against a store and an origin inside the test
$(B)/test/test_fetch: test/unit/test_fetch.c $(B)/libgoblin-origin.a $(B)/libgoblin.a
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -iquote store -iquote store/origin $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/libgoblin-origin.a $(B)/libgoblin.a $(LIBS) -lcurl -lcmocka -lm

# goblinctl's memcache client parsers are pure too
$(B)/test/test_mc_client: test/unit/test_mc_client.c $(B)/cli/mc_client.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Icli $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/cli/mc_client.o -lcmocka

# and so is its HTTP response parser
$(B)/test/test_http_client: test/unit/test_http_client.c $(B)/cli/http_client.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Icli $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/cli/http_client.o -lcmocka

BENCH_SPEC_OBJ = $(B)/cli/bench_spec.o $(B)/cli/workload.o
$(B)/test/test_bench_spec: test/unit/test_bench_spec.c $(BENCH_SPEC_OBJ) $(B)/libgoblin.a
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Icli $(FINAL_LDFLAGS) -o $@ $< \
	    $(BENCH_SPEC_OBJ) $(B)/libgoblin.a $(LIBS) -lcmocka -lm

# Tests and fuzz targets see store/ headers as "x.h" only
# (-iquote): store/numa.h must not hide libnuma's <numa.h>.
$(B)/test/%: test/unit/%.c $(B)/libgoblin.a $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -iquote store $(FINAL_LDFLAGS) -o $@ $< $(B)/libgoblin.a $(LIBS) -lcmocka -lm

# the emulated HDD is a FUSE file system, not a libgoblin client: of
# store/ it takes only the programs' scaffolding
$(B)/bench/hddemu: bench/hddemu.c $(B)/store/prog.o $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/store/prog.o $(FUSE_LIBS) -lpthread

# The drivers share goblinctl's workload code (cli/workload.c).
BENCH_LIB = $(B)/cli/workload.o $(B)/libgoblin.a
$(B)/bench/%: bench/%.c $(BENCH_LIB) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS) -o $@ $< $(BENCH_LIB) $(LIBS) -lm

# The RocksDB comparison also links librocksdb (of BENCH_DEPS).
$(B)/bench/vsrocks: bench/vsrocks.c $(BENCH_LIB) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS) -o $@ $< $(BENCH_LIB) $(LIBS) -lrocksdb -lm

units: $(UNIT_BIN) $(B)/test/rdma_probe

# 76-rdma.bats's client that misbehaves (a bad rkey), on the client library
$(B)/test/rdma_probe: test/rdma/rdma_probe.c $(B)/cli/rdma_client.o $(B)/netd/gproto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS) -o $@ $^ $(RDMA_LIBS)

# Each command installs its packages first, in one apt run (so never two
# at once under -j), then builds in a second make: nothing compiles while
# apt-get runs, and the build reads pkg-config once the -dev packages are
# there.
test:
	$(call apt_install,$(BUILD_DEPS) $(RUN_DEPS) $(TEST_DEPS),tests)
	@$(MAKE) --no-print-directory all units fuzz hct
	@bash test/run.sh

# hct: the HTTP caching tests (npm http-cache-tests, pinned in the script)
# in $(B)/hct, installed once: test/bats/66-http-cache-tests.bats runs them
.PHONY: hct
hct:
	@bash bench/http-cache-tests.sh --install-only

run:
	$(call apt_install,$(BUILD_DEPS) $(RUN_DEPS),make run)
	@$(MAKE) --no-print-directory programs
	@bash netd/run.sh

bench:
	$(call apt_install,$(BUILD_DEPS) $(RUN_DEPS) $(TEST_DEPS) $(BENCH_DEPS),benchmarks)
	@$(MAKE) --no-print-directory all $(BENCH_ROCKS)
	@bash bench/run.sh

# libFuzzer targets: `make fuzz` builds them; make test replays their corpora;
# make fuzz-long fuzzes them for real (or build/fuzz/fuzz_x test/fuzz/corpus_x).
# undefined behaviour stops a target as a crash does (else it is a line
# in a log nobody reads)
FUZZ_CFLAGS = $(STD) -g -O1 -fsanitize=fuzzer,address,undefined \
	      -fno-sanitize-recover=all
FUZZ_SRC = $(wildcard test/fuzz/fuzz_*.c)
FUZZ_BIN = $(FUZZ_SRC:test/fuzz/%.c=$(B)/fuzz/%)
fuzz: $(FUZZ_BIN)

$(B)/fuzz/fuzz_mc_proto: test/fuzz/fuzz_mc_proto.c netd/mc_proto.c netd/mc_proto.h
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -Inetd \
	    -o $@ $< netd/mc_proto.c

$(B)/fuzz/fuzz_resp_proto: test/fuzz/fuzz_resp_proto.c netd/resp_proto.c netd/resp_proto.h
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -Inetd \
	    -o $@ $< netd/resp_proto.c -lm

$(B)/fuzz/fuzz_gproto: test/fuzz/fuzz_gproto.c netd/gproto.c netd/gproto.h
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -Inetd \
	    -o $@ $< netd/gproto.c

$(B)/fuzz/fuzz_http_proto: test/fuzz/fuzz_http_proto.c netd/http_proto.c netd/http_proto.h
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -Inetd \
	    -o $@ $< netd/http_proto.c -lhttp_parser

FUZZ_SEM_SRC = netd/http_sem.c store/origin/rfc9111.c store/httpdate.c
$(B)/fuzz/fuzz_http_sem: test/fuzz/fuzz_http_sem.c $(FUZZ_SEM_SRC) netd/http_sem.h \
		store/origin/origin.h
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -Inetd \
	    -o $@ $< $(FUZZ_SEM_SRC)

# the attribute record's codec (store/attr.c): pure
$(B)/fuzz/fuzz_http_attr: test/fuzz/fuzz_http_attr.c store/attr.c store/httpdate.c store/goblin.h
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -iquote store \
	    -o $@ $< store/attr.c store/httpdate.c

# the connection state machines: netd less main.c (worker.c is #included
# by the target, which runs its loop) over socketpairs, on a real store
FUZZ_CONN_SRC = $(filter-out netd/main.c netd/worker.c,$(NETD_SRC))
$(B)/fuzz/fuzz_conn: test/fuzz/fuzz_conn.c $(FUZZ_CONN_SRC) netd/worker.c \
		$(wildcard netd/*.h) $(STORE_SRC) $(wildcard store/*.h) \
		$(ORIGIN_SRC) $(wildcard store/origin/*.h)
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -Inetd \
	    -iquote store -o $@ $< $(FUZZ_CONN_SRC) $(STORE_SRC) $(ORIGIN_SRC) $(LIBS) \
	    -lcurl -lhttp_parser $(RDMA_LIBS)

# make fuzz-long: every target for FUZZ_TIME seconds, FUZZ_JOBS at once,
# new coverage merged into test/fuzz/corpus_*, the summary in
# bench/results/fuzz.md (test/fuzz/fuzz-long.sh)
FUZZ_TIME ?= 600
FUZZ_JOBS ?= 2
fuzz-long: fuzz
	@CLANG=$(CLANG) FUZZ_TIME=$(FUZZ_TIME) FUZZ_JOBS=$(FUZZ_JOBS) \
	    bash test/fuzz/fuzz-long.sh

$(B)/fuzz/%: test/fuzz/%.c $(STORE_SRC) $(wildcard store/*.h)
	@mkdir -p $(dir $@)
	$(QLD)$(CLANG) $(FUZZ_CFLAGS) -iquote store \
	    -o $@ $< $(STORE_SRC) $(LIBS)

# make install: the three programs, their manual pages, an example
# goblin.conf (installed as the configuration only where there is none)
# and the systemd unit, whose paths follow PREFIX, SBINDIR and SYSCONFDIR.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/goblin
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
MAN_PAGES = $(wildcard man/*.[1-8])
INSTALL ?= install

$(B)/goblind.service: netd/goblind.service.in FORCE
	@mkdir -p $(B)
	@sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    $< >$@.tmp && (cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@)

install: programs $(B)/goblind.service
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/goblin $(DESTDIR)$(UNITDIR)
	$(INSTALL) -m 755 $(B)/goblinctl $(B)/goblinfs $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(B)/goblind $(DESTDIR)$(SBINDIR)/
	@for m in $(MAN_PAGES); do \
	  s=$${m##*.}; $(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$s && \
	  echo "$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/" && \
	  $(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done
	$(INSTALL) -m 644 netd/goblin.conf $(DESTDIR)$(DOCDIR)/goblin.conf.example
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/goblin/goblin.conf ]; then \
	  echo "keeping $(DESTDIR)$(SYSCONFDIR)/goblin/goblin.conf"; \
	else \
	  echo "$(INSTALL) -m 644 netd/goblin.conf $(DESTDIR)$(SYSCONFDIR)/goblin/goblin.conf"; \
	  $(INSTALL) -m 644 netd/goblin.conf $(DESTDIR)$(SYSCONFDIR)/goblin/goblin.conf; \
	fi
	$(INSTALL) -m 644 $(B)/goblind.service $(DESTDIR)$(UNITDIR)/goblind.service

# An edited goblin.conf is the admin's: it stays.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/goblinctl $(DESTDIR)$(BINDIR)/goblinfs \
	    $(DESTDIR)$(SBINDIR)/goblind $(DESTDIR)$(UNITDIR)/goblind.service \
	    $(DESTDIR)$(DOCDIR)/goblin.conf.example
	@for m in $(notdir $(MAN_PAGES)); do \
	  echo "rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m"; \
	  rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; \
	done
	@c=$(DESTDIR)$(SYSCONFDIR)/goblin/goblin.conf; \
	if cmp -s netd/goblin.conf $$c; then rm -f $$c; \
	elif [ -e $$c ]; then echo "keeping $$c: it was edited"; fi
	@rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/goblin 2>/dev/null || true

# format: rewrite every C file in the house style; format-check: fail,
# naming the places, if one is not (make test runs it, in 65-rooms.bats)
format:
	$(CLANG_FORMAT) -i --style=file:$(CURDIR)/.clang-format $(FORMAT_SRC)

format-check:
	@$(CLANG_FORMAT) --dry-run --Werror --style=file:$(CURDIR)/.clang-format \
	    $(FORMAT_SRC) && echo "format-check: $(words $(FORMAT_SRC)) files in the house style"

clean:
	rm -rf $(B)

FORCE:
.PHONY: all programs deps deps-build deps-run deps-test deps-bench units \
	test run bench fuzz fuzz-long install uninstall format format-check \
	clean FORCE
-include $(STORE_OBJ:.o=.d) $(ORIGIN_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(FS_OBJ:.o=.d) $(NETD_OBJ:.o=.d) \
	 $(BENCH_BIN:=.d)

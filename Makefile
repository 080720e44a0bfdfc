# Goblin Store: one build, one test command.
#   make            build everything into build/
#   make deps       install the Debian packages the build and tests need
#   make run        build and start goblind on ./var/store (foreground)
#   make test       unit tests (cmocka) + integration tests (bats)
#   make bench      benchmarks (long; results under bench/results/)
#   make fuzz       build the libFuzzer targets (clang)
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

ifeq ($(V),)
Q = @
QCC = @printf '  CC   %s\n' $@;
QLD = @printf '  LD   %s\n' $@;
QAR = @printf '  AR   %s\n' $@;
endif

B = build
STORE_SRC = $(wildcard store/*.c)
STORE_OBJ = $(STORE_SRC:%.c=$(B)/%.o)
CLI_SRC = $(wildcard cli/*.c)
CLI_OBJ = $(CLI_SRC:%.c=$(B)/%.o)
FS_SRC = $(wildcard fs/*.c)
FS_OBJ = $(FS_SRC:%.c=$(B)/%.o)
NETD_SRC = $(wildcard netd/*.c)
NETD_OBJ = $(NETD_SRC:%.c=$(B)/%.o)
# goblind links the filesystem for --mount, less goblinfs's main()
FS_LIB_OBJ = $(filter-out $(B)/fs/main.o,$(FS_OBJ))
FUSE_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null)
UNIT_SRC = $(wildcard test/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:test/unit/%.c=$(B)/test/%)
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(B)/bench/%)

# Debian packages: build, tests, benchmarks.
DEPS = build-essential pkg-config liburing-dev libxxhash-dev libcmocka-dev \
       bats fio time python3 clang libclang-rt-14-dev fuse3 libfuse3-dev \
       libcurl4-openssl-dev librocksdb-dev libnuma-dev libinih-dev gnuplot-nox \
       memcached libmemcached-tools python3-pymemcache nutcracker \
       netcat-openbsd libhttp-parser-dev varnish nginx-light python3-requests \
       curl

all: $(B)/libgoblin.a $(B)/goblinctl $(B)/goblinfs $(B)/goblind $(BENCH_BIN)

deps:
	@missing=; for p in $(DEPS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (apt-get)" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# Rebuild everything when the flags change (SANITIZE=, OPT=, ...): the
# stamp holds the last flags and is rewritten only when they differ.
FLAGS_STAMP = $(B)/.flags
$(shell mkdir -p $(B); echo '$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS)' | \
	cmp -s - $(FLAGS_STAMP) || \
	echo '$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS)' > $(FLAGS_STAMP))

$(B)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(FINAL_CFLAGS) -c $< -o $@

$(B)/libgoblin.a: $(STORE_OBJ)
	$(QAR)rm -f $@ && ar rcs $@ $^

# bench_spec.c includes bench/workload.h, which includes "goblin.h"
$(B)/cli/bench_spec.o: FINAL_CFLAGS += -iquote store

$(B)/goblinctl: $(CLI_OBJ) $(B)/libgoblin.a
	$(QLD)$(CC) $(FINAL_LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libgoblin.a $(LIBS) -lm

$(B)/fs/%.o: fs/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) -c $< -o $@

$(B)/goblinfs: $(FS_OBJ) $(B)/libgoblin.a
	$(QLD)$(CC) $(FINAL_LDFLAGS) -o $@ $(FS_OBJ) $(B)/libgoblin.a $(LIBS) $(FUSE_LIBS) -lcurl

$(B)/netd/%.o: netd/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) -c $< -o $@

$(B)/goblind: $(NETD_OBJ) $(FS_LIB_OBJ) $(B)/libgoblin.a
	$(QLD)$(CC) $(FINAL_LDFLAGS) -o $@ $(NETD_OBJ) $(FS_LIB_OBJ) \
	    $(B)/libgoblin.a $(LIBS) $(FUSE_LIBS) -lcurl -linih -lhttp_parser

# the memcache parser is pure: its test links it alone
$(B)/test/test_mc_proto: test/unit/test_mc_proto.c $(B)/netd/mc_proto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/mc_proto.o -lcmocka

# so is the HTTP head parser, on Debian's libhttp-parser
$(B)/test/test_http_proto: test/unit/test_http_proto.c $(B)/netd/http_proto.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/http_proto.o -lhttp_parser -lcmocka

# and the HTTP semantics (dates, ranges, conditionals, caching) need nothing
$(B)/test/test_http_sem: test/unit/test_http_sem.c $(B)/netd/http_sem.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/http_sem.o -lcmocka

# the HTTP attribute record: pure
$(B)/test/test_http_attr: test/unit/test_http_attr.c $(B)/netd/http_attr.o
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/netd/http_attr.o -lcmocka

# the origin fetcher against a store and an origin inside the test
FETCH_TEST_OBJ = $(B)/netd/fetch.o $(B)/netd/http_attr.o $(B)/netd/http_sem.o
$(B)/test/test_fetch: test/unit/test_fetch.c $(FETCH_TEST_OBJ) $(B)/libgoblin.a
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Inetd -iquote store $(FINAL_LDFLAGS) -o $@ $< \
	    $(FETCH_TEST_OBJ) $(B)/libgoblin.a $(LIBS) -lcurl -lcmocka -lm

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

$(B)/test/test_bench_spec: test/unit/test_bench_spec.c $(B)/cli/bench_spec.o $(B)/libgoblin.a
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -Icli $(FINAL_LDFLAGS) -o $@ $< \
	    $(B)/cli/bench_spec.o $(B)/libgoblin.a $(LIBS) -lcmocka -lm

# Tests, benchmarks and fuzz targets see store/ headers as "x.h" only
# (-iquote): store/numa.h must not hide libnuma's <numa.h>.
$(B)/test/%: test/unit/%.c $(B)/libgoblin.a $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -iquote store $(FINAL_LDFLAGS) -o $@ $< $(B)/libgoblin.a $(LIBS) -lcmocka -lm

# the emulated HDD is a FUSE file system, not a libgoblin client
$(B)/bench/hddemu: bench/hddemu.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) $(FUSE_CFLAGS) $(FINAL_LDFLAGS) -o $@ $< \
	    $(FUSE_LIBS) -lpthread

$(B)/bench/%: bench/%.c $(B)/libgoblin.a $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -iquote store $(FINAL_LDFLAGS) -o $@ $< $(B)/libgoblin.a $(LIBS) -lm

# The RocksDB comparison also links librocksdb (a Debian package of DEPS).
$(B)/bench/vsrocks: bench/vsrocks.c $(B)/libgoblin.a $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(QLD)$(CC) $(FINAL_CFLAGS) -iquote store $(FINAL_LDFLAGS) -o $@ $< $(B)/libgoblin.a $(LIBS) -lrocksdb -lm

units: $(UNIT_BIN)

test: deps all units fuzz
	@bash test/run.sh

run: deps all
	@bash netd/run.sh

bench: deps all
	@bash bench/run.sh

# libFuzzer targets: `make fuzz` builds them; make test replays their corpora;
# build/fuzz/fuzz_x -max_total_time=60 test/fuzz/corpus_x fuzzes for real.
FUZZ_SRC = $(wildcard test/fuzz/fuzz_*.c)
FUZZ_BIN = $(FUZZ_SRC:test/fuzz/%.c=$(B)/fuzz/%)
fuzz: $(FUZZ_BIN)

$(B)/fuzz/fuzz_mc_proto: test/fuzz/fuzz_mc_proto.c netd/mc_proto.c netd/mc_proto.h
	@mkdir -p $(dir $@)
	$(QLD)clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -Inetd \
	    -o $@ $< netd/mc_proto.c

$(B)/fuzz/fuzz_http_proto: test/fuzz/fuzz_http_proto.c netd/http_proto.c netd/http_proto.h
	@mkdir -p $(dir $@)
	$(QLD)clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -Inetd \
	    -o $@ $< netd/http_proto.c -lhttp_parser

$(B)/fuzz/fuzz_http_sem: test/fuzz/fuzz_http_sem.c netd/http_sem.c netd/http_sem.h
	@mkdir -p $(dir $@)
	$(QLD)clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -Inetd \
	    -o $@ $< netd/http_sem.c

$(B)/fuzz/fuzz_http_attr: test/fuzz/fuzz_http_attr.c netd/http_attr.c netd/http_attr.h
	@mkdir -p $(dir $@)
	$(QLD)clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -Inetd \
	    -o $@ $< netd/http_attr.c

$(B)/fuzz/%: test/fuzz/%.c $(STORE_SRC) $(wildcard store/*.h)
	@mkdir -p $(dir $@)
	$(QLD)clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -iquote store \
	    -o $@ $< $(STORE_SRC) $(LIBS)

clean:
	rm -rf $(B)

.PHONY: all deps units test run bench fuzz clean
-include $(STORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(FS_OBJ:.o=.d) $(NETD_OBJ:.o=.d) \
	 $(BENCH_BIN:=.d)

# dsight: one Makefile for the whole tree.
#
#   make            build/ : bin/dsight, bin/dsightd, tools, unit tests
#   make asan       build-asan/ : the same with AddressSanitizer + UBSan
#   make check      both builds, then every test suite (tests/run)
#   make fuzz       build-fuzz/ : libFuzzer harnesses (clang), each run for
#                   FUZZ_SECONDS (default 60) from tests/fuzz/corpus/<harness>
#   make install    PREFIX (default /usr/local) and DESTDIR honoured
#   make clean
#
# Sources are found by directory: common/*/*.c -> libdsight, protocol/*.c ->
# libdsproto, client/*.c -> dsight, daemon/*.c -> dsightd, scripts/*.c ->
# one tool each (plus scripts/<tool>/*.c when present), tests/unit/test_*.c ->
# one test program each.

B       ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
VERSION := 0.1.0

PKGS     := jansson yajl libuv sqlite3 zlib libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lunistring -lm -lpthread
# Process start matters: `dsight query --remote` is a one-shot an agent runs
# many times, and the dynamic loader's work for libcrypto, libunistring and
# libsqlite3 costs milliseconds per run (bench-session: warm summary <= 5 ms
# end to end).  Link their static archives when installed (only the objects
# used are pulled in); --as-needed then drops the shared copies.
STATIC_ARCHIVES := $(foreach l,crypto unistring sqlite3,$(if $(wildcard $(shell $(CC) -print-file-name=lib$(l).a)),$(l)))
ifneq ($(STATIC_ARCHIVES),)
PKG_LIBS := -Wl,-Bstatic $(addprefix -l,$(STATIC_ARCHIVES)) -Wl,-Bdynamic -Wl,--as-needed $(PKG_LIBS) -ldl
endif

WARN     := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
OPT      ?= -O2
ifeq ($(SAN),1)
OPT      := -O1
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
# libFuzzer build (make fuzz): every object instrumented, harnesses linked
# with the fuzzer runtime.
ifeq ($(SAN),fuzz)
OPT      := -O1
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CPPFLAGS += -DDSIGHT_TOP=\"$(CURDIR)\" -Iclient
endif
CPPFLAGS += -D_GNU_SOURCE -DDSIGHT_VERSION=\"$(VERSION)\" -Icommon -Iprotocol -I$(B)/gen $(PKG_CFLAGS)
# -fPIC: the same objects also make libdsight.so (the Python binding).
CFLAGS   += $(WARN) $(OPT) -g -fPIC $(SANFLAGS) -MMD -MP
LDFLAGS  += $(SANFLAGS)

COMMON_SRC   := $(wildcard common/*/*.c)
PROTOCOL_SRC := $(wildcard protocol/*.c)
CLIENT_SRC   := $(wildcard client/*.c)
DAEMON_SRC   := $(wildcard daemon/*.c)
TOOL_SRC     := $(wildcard scripts/*.c)
UNIT_SRC     := $(wildcard tests/unit/test_*.c)
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
WEB_FILES    := $(sort $(wildcard web/*.html web/*.css web/*.js))

# Generated sources (the embedded viewer) join libdsight when present.
ifneq ($(wildcard scripts/embed-web),)
GEN_SRC := $(B)/gen/web_assets.c
endif

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

LIBDSIGHT := $(B)/libdsight.a
LIBPROTO  := $(B)/libdsproto.a
BINS      := $(B)/bin/dsight $(B)/bin/dsightd
# The shared library the Python package loads (client/python/native/dsapi.c
# on top of libdsight), linked against the system's shared libraries.
SHLIB     := $(B)/lib/libdsight.so
SHLIB_SRC := $(wildcard client/python/native/*.c)
SHLIB_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lunistring -lm -lpthread
TOOLS     := $(patsubst scripts/%.c,$(B)/bin/%,$(TOOL_SRC))
UNITS     := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

FUZZERS   := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 60

.PHONY: all asan check install clean fuzz fuzz-build fuzzers
# Keep intermediate objects (tools and tests link from pattern-rule objects).
.SECONDARY:
all: $(BINS) $(TOOLS) $(UNITS) $(SHLIB)

asan:
	$(MAKE) B=build-asan SAN=1 all

check: all asan
	tests/run

# The harnesses of tests/fuzz/ (clang: libFuzzer + ASan + UBSan).
fuzz-build:
	$(MAKE) B=build-fuzz SAN=fuzz CC=clang fuzzers

fuzzers: $(FUZZERS)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# web/ itself: its mtime changes when a file is added or removed.
$(B)/gen/web_assets.c: $(WEB_FILES) scripts/embed-web web
	@mkdir -p $(dir $@)
	scripts/embed-web $@ $(WEB_FILES)

# Exact arithmetic (correctly rounded sums, timeline bucket edges
# start + i*width): no fused multiply-add may change a rounding.
$(B)/obj/common/query/qstat.o $(B)/obj/common/query/qbucket.o: CFLAGS += -ffp-contract=off

$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIBDSIGHT): $(call obj,$(COMMON_SRC)) $(patsubst $(B)/gen/%.c,$(B)/obj/gen/%.o,$(GEN_SRC))
	@rm -f $@
	ar rcs $@ $^

$(LIBPROTO): $(call obj,$(PROTOCOL_SRC))
	@rm -f $@
	ar rcs $@ $^ $(if $^,,)

$(B)/bin/dsight: $(call obj,$(CLIENT_SRC)) $(LIBPROTO) $(LIBDSIGHT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CLIENT_SRC)) $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

$(B)/bin/dsightd: $(call obj,$(DAEMON_SRC)) $(LIBPROTO) $(LIBDSIGHT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(DAEMON_SRC)) $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

$(SHLIB): $(call obj,$(SHLIB_SRC)) $(LIBPROTO) $(LIBDSIGHT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libdsight.so -Wl,--no-undefined -o $@ $(call obj,$(SHLIB_SRC)) -Wl,--whole-archive $(LIBPROTO) $(LIBDSIGHT) -Wl,--no-whole-archive $(SHLIB_LIBS)

$(B)/bin/%: $(B)/obj/scripts/%.o $(LIBPROTO) $(LIBDSIGHT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

# A tool too big for one file keeps its other modules in scripts/<tool>/*.c.
$(foreach t,$(TOOL_SRC),$(eval $(B)/bin/$(basename $(notdir $(t))): $(call obj,$(wildcard scripts/$(basename $(notdir $(t)))/*.c))))

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(LIBPROTO) $(LIBDSIGHT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

# A harness links the client's modules (not its main) for the CLI parser.
$(B)/fuzz/%: $(B)/obj/tests/fuzz/%.o $(call obj,$(filter-out client/main.c,$(CLIENT_SRC))) $(LIBPROTO) $(LIBDSIGHT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(PREFIX)/share/man/man1/
	$(if $(wildcard man/*.5),install -m 644 $(wildcard man/*.5) $(DESTDIR)$(PREFIX)/share/man/man5/)

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

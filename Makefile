# dsight: one Makefile for the whole tree.
#
#   make            build/ : bin/dsight, bin/dsightd, tools, unit tests, man pages
#   make asan       build-asan/ : the same with AddressSanitizer + UBSan
#   make tsan       build-tsan/ : the same with ThreadSanitizer
#   make test       the quick tier: plain build, unit + integration tests,
#                   long random loops shortened (tests/run --quick)
#   make check      the full tier CI runs: both builds, unit, integration,
#                   browser and fuzz smoke, long loops, the threaded tests
#                   on build-tsan/ too (tests/run); see tests/README.md
#   make fuzz       build-fuzz/ : libFuzzer harnesses (clang), each run for
#                   FUZZ_SECONDS (default 60) from tests/fuzz/corpus/<harness>
#   make install    PREFIX (default /usr/local) and DESTDIR honoured
#   make uninstall  removes what install put there
#   make clean
#
# Knobs: V=1 prints every command (quiet by default); LINK=static|dynamic
# (below); CFLAGS (default: OPT -g, OPT default -O2), CPPFLAGS and LDFLAGS
# are the builder's and come last on each command line: what the tree needs
# (-std=c11, the warnings, -fPIC, -MMD -MP, -Icommon ..., the sanitizers,
# -ffp-contract=off on the exact-arithmetic objects) is kept whatever they
# say.  DEVELOPER=1 (tests/run and .ci/run set it) adds -Werror: a
# packager's newer compiler with a new warning still builds.  Objects and
# binaries are rebuilt when the compiler, flags or libraries change
# (build/cflags.stamp, build/ldflags.stamp; -Werror is left out of the
# stamp, so switching DEVELOPER alone rebuilds nothing).
#
# Sources are found by directory: common/*/*.c -> libdsight, protocol/*.c ->
# libdsproto, client/*.c -> dsight, daemon/*.c -> dsightd, scripts/tools/*.c
# -> one tool each (plus scripts/tools/<tool>/*.c when present),
# tests/unit/test_*.c -> one test program each.

# The version, in one place: compiled in (DSIGHT_VERSION) and written into
# the man pages (@VERSION@ in man/*) when they are built into $(B)/man.
VERSION := 0.1.0

B       ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc

.DEFAULT_GOAL := all

# A recipe that fails removes its half-written target.
.DELETE_ON_ERROR:

# Goals that need neither the libraries nor the compiler flags.
NO_DEPS_GOALS := clean uninstall
NEED_DEPS := $(filter-out $(NO_DEPS_GOALS),$(or $(MAKECMDGOALS),all))

# ---- dependencies: a missing one stops the build, named -----------------
#
# pkg-config module -> the Debian package that provides it
# (scripts/install-deps installs them all).
PKGS := jansson yajl libuv sqlite3 zlib libdeflate libcrypto
deb.jansson   := libjansson-dev
deb.yajl      := libyajl-dev
deb.libuv     := libuv1-dev
deb.sqlite3   := libsqlite3-dev
deb.zlib      := zlib1g-dev
deb.libdeflate := libdeflate-dev
deb.libcrypto := libssl-dev
# HTTP (doc/sessions-protocol.md "HTTP"): dsightd links libmicrohttpd;
# dsight loads libcurl at run time, only when an HTTP address is used (the
# unix-socket one-shot keeps its start-up cost), so it needs libcurl's
# header here, not its library.
HTTP_PKGS := libmicrohttpd libcurl
deb.libmicrohttpd := libmicrohttpd-dev
deb.libcurl       := libcurl4-openssl-dev

# Link choice, the same on every machine.  LINK=static (the default) links
# libcrypto, libunistring, libsqlite3, jansson, yajl, zlib and libdeflate from their
# static archives (shipped by the same -dev packages) and the rest (libuv,
# the C library) dynamically, and links `dsight` as a position-dependent
# executable (-no-pie): `dsight query --remote` is a one-shot an agent runs
# many times, and the dynamic loader's work (loading each library, 19,000
# relocations of a PIE) was most of its cost (doc/performance.md "Warm
# sessions").  LINK=dynamic links every library dynamically (for
# distributions that forbid static copies).  A missing archive is an error,
# never a silent fallback.
LINK ?= static
STATIC_LIBS := crypto unistring sqlite3 jansson yajl_s z deflate
deb.crypto    := libssl-dev
deb.unistring := libunistring-dev
deb.yajl_s    := libyajl-dev
deb.z         := zlib1g-dev
deb.deflate   := libdeflate-dev

ifneq ($(NEED_DEPS),)
ifeq ($(shell command -v pkg-config),)
$(error pkg-config is missing (Debian: pkg-config); run scripts/install-deps)
endif
MISSING_PKGS := $(strip $(foreach p,$(PKGS) $(HTTP_PKGS),$(if $(shell pkg-config --exists $(p) && echo ok),,$(p))))
ifneq ($(MISSING_PKGS),)
$(error Missing libraries: $(foreach p,$(MISSING_PKGS),$(p) (Debian: $(deb.$(p)))); run scripts/install-deps)
endif
ifeq ($(shell printf '\043include <unistr.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo ok),)
$(error Missing library: libunistring (Debian: libunistring-dev); run scripts/install-deps)
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(HTTP_PKGS))
DAEMON_LIBS := $(shell pkg-config --libs libmicrohttpd)
SHLIB_LIBS := $(shell pkg-config --libs $(PKGS)) -lunistring -lm -lpthread
ifeq ($(LINK),static)
MISSING_ARCHIVES := $(strip $(foreach l,$(STATIC_LIBS),$(if $(wildcard $(shell $(CC) -print-file-name=lib$(l).a)),,$(l))))
ifneq ($(MISSING_ARCHIVES),)
$(error LINK=static needs $(foreach l,$(MISSING_ARCHIVES),lib$(l).a (Debian: $(deb.$(l)))); install it, or build with LINK=dynamic)
endif
PKG_LIBS := -Wl,-Bstatic $(addprefix -l,$(STATIC_LIBS)) -Wl,-Bdynamic \
            $(shell pkg-config --libs $(filter-out sqlite3 libcrypto jansson yajl zlib libdeflate,$(PKGS))) -lm -lpthread -ldl
CLIENT_LDFLAGS := -no-pie
# bin/dsight, the lean entry: a static executable (no sanitizer runtime
# links statically, so SAN builds link it like the others).
ifeq ($(SAN),)
ENTRY_LIBS := -static $(addprefix -l,$(STATIC_LIBS)) -lm -lpthread -ldl
endif
else ifeq ($(LINK),dynamic)
PKG_LIBS := $(shell pkg-config --libs $(PKGS)) -lunistring -lm -lpthread
else
$(error LINK must be static or dynamic, not '$(LINK)')
endif
endif

# The tree's own flags (ALL_*), then the builder's: a user's CFLAGS=-O0 or
# CPPFLAGS=-DX changes the optimisation or adds a define, nothing else.
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes
ifeq ($(DEVELOPER),1)
WERROR   := -Werror
endif
OPT      ?= -O2
ifeq ($(SAN),1)
OPT      := -O1
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
# ThreadSanitizer (make tsan): the build's and the daemon's threads
ifeq ($(SAN),thread)
OPT      := -O1
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
endif
# libFuzzer build (make fuzz): every object instrumented, harnesses linked
# with the fuzzer runtime.
ifeq ($(SAN),fuzz)
OPT      := -O1
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
FUZZ_CPPFLAGS := -DDSIGHT_TOP=\"$(CURDIR)\" -Iclient
endif
CFLAGS   ?= $(OPT) -g
ALL_CPPFLAGS = -D_GNU_SOURCE -DDSIGHT_VERSION=\"$(VERSION)\" -Icommon -Iprotocol -I$(B)/gen \
               $(FUZZ_CPPFLAGS) $(PKG_CFLAGS) $(CPPFLAGS)
# -fPIC: the same objects also make libdsight.so (the Python binding).
ALL_CFLAGS   = -std=c11 $(WARN) -fPIC $(SANFLAGS) -MMD -MP $(CFLAGS)
ALL_LDFLAGS  = $(SANFLAGS) $(LDFLAGS)
# compile: the command of one object; EXACT_CFLAGS (target-specific, below)
# and -Werror come after the builder's flags, so nothing there undoes them.
compile = $(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(EXACT_CFLAGS) $(WERROR)

# ---- quiet output (V=1: every command; make -s: nothing) -----------------
MAKEFLAGS_SHORT := $(firstword -$(MAKEFLAGS))
ifeq ($(V),1)
Q   :=
say :=
else ifneq ($(findstring s,$(MAKEFLAGS_SHORT)),)
Q   := @
say :=
else
Q   := @
say  = @printf '  %-6s %s\n' '$(1)' '$(2)'
endif

# ---- flag stamps: a changed compiler, flag or library rebuilds ----------
# Each stamp is rewritten only when its text changes, so its mtime is the
# time the flags last changed (never under make -n, which changes nothing).
CFLAGS_STAMP  := $(B)/cflags.stamp
LDFLAGS_STAMP := $(B)/ldflags.stamp
ifneq ($(NEED_DEPS),)
ifeq ($(findstring n,$(MAKEFLAGS_SHORT)),)
stamp = $(shell mkdir -p $(B) && printf '%s\n' '$(2)' | cmp -s - $(1) || printf '%s\n' '$(2)' >$(1))
$(call stamp,$(CFLAGS_STAMP),$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS))
$(call stamp,$(LDFLAGS_STAMP),$(CC) $(ALL_LDFLAGS) $(PKG_LIBS))
endif
endif
# Written above at parse time; this rule only lets make -n plan a fresh tree.
$(CFLAGS_STAMP) $(LDFLAGS_STAMP): ;

COMMON_SRC   := $(wildcard common/*/*.c)
PROTOCOL_SRC := $(wildcard protocol/*.c)
CLIENT_SRC   := $(wildcard client/*.c)
ENTRY_SRC    := client/entry/main.c
DAEMON_SRC   := $(wildcard daemon/*.c)
TOOL_SRC     := $(wildcard scripts/tools/*.c)
UNIT_SRC     := $(wildcard tests/unit/test_*.c)
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
# The viewer's files, in the order the page gets them (html.c inlines every
# .css, then every .js, in this order; embed-web keeps it).  base.js comes
# first: main.js reads its DSUI as it loads.  The other scripts refer to each
# other only from functions that run after the page has loaded, so their
# order is free; it is the file-name order the pages have always had.  A
# file of web/ missing here stops the build.
WEB_FILES    := web/base.js web/catalog.js web/data.js web/index.html web/live.css web/live.js web/main.js \
                web/query-analysis.js web/query-gpu.js web/query-timeline.js web/query.js web/style.css \
                web/ui-axis.js web/ui-export.js web/ui-flame.js web/ui-header.js \
                web/ui-legend.js web/ui-metrics.js web/ui-nav.js web/ui-nsight.js \
                web/ui-panes.js web/ui-ranges.js web/ui-reqtable.js web/ui-requests.js \
                web/ui-gpu.js web/ui-sessions.js web/ui-sql.js web/ui-summary.js
WEB_UNLISTED := $(filter-out $(WEB_FILES),$(wildcard web/*.html web/*.css web/*.js))
ifneq ($(WEB_UNLISTED),)
$(error $(WEB_UNLISTED): not in the Makefile's WEB_FILES; add it where the page needs it)
endif

# Generated sources (the embedded viewer) join libdsight when present.
ifneq ($(wildcard scripts/embed-web),)
GEN_SRC := $(B)/gen/web_assets.c
endif

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

LIBDSIGHT := $(B)/libdsight.a
LIBPROTO  := $(B)/libdsproto.a
BINS      := $(B)/bin/dsight $(B)/bin/dsightd
# The full `dsight` (client/main.c); bin/dsight (client/entry/main.c) answers
# `query --remote` itself and hands every other command to it.
FULL      := $(B)/libexec/dsight/dsight
LIBCLIENT := $(B)/libdsclient.a
# The shared library the Python package loads (client/python/native/dsapi.c
# on top of the two libraries), linked against the system's shared libraries.
SHLIB     := $(B)/lib/libdsight.so
SHLIB_SRC := $(wildcard client/python/native/*.c)
TOOLS     := $(patsubst scripts/tools/%.c,$(B)/bin/%,$(TOOL_SRC))
UNITS     := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
MAN_SRC   := $(wildcard man/*.[1-8])
MANS      := $(patsubst man/%,$(B)/man/%,$(MAN_SRC))
ALL_OBJS  := $(call obj,$(COMMON_SRC) $(PROTOCOL_SRC) $(CLIENT_SRC) $(ENTRY_SRC) $(DAEMON_SRC) \
                        $(wildcard scripts/tools/*.c scripts/tools/*/*.c) $(UNIT_SRC) $(FUZZ_SRC) \
                        $(SHLIB_SRC)) \
             $(patsubst $(B)/gen/%.c,$(B)/obj/gen/%.o,$(GEN_SRC))

FUZZERS   := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 60

.PHONY: all asan tsan test check install uninstall clean fuzz fuzz-build fuzzers hdr-check
# Keep intermediate objects (tools and tests link from pattern-rule objects).
.SECONDARY:
all: $(BINS) $(FULL) $(TOOLS) $(UNITS) $(MANS) $(SHLIB)

asan:
	$(Q)$(MAKE) B=build-asan SAN=1 all

tsan:
	$(Q)$(MAKE) B=build-tsan SAN=thread all

# tests/run builds what it tests (with DEVELOPER=1: -Werror).
test:
	tests/run --quick

check:
	tests/run

# Every header compiles alone (it includes what it uses): each is compiled
# as a translation unit of its own, with the flags of the tree.
# (-MF: a header is checked again when one it includes changes.)
HDRS := $(wildcard common/*/*.h protocol/*.h daemon/*.h client/*.h client/python/native/*.h)
HDR_OKS := $(patsubst %.h,$(B)/hdr/%.ok,$(HDRS))
hdr-check: $(HDR_OKS)

$(B)/hdr/%.ok: %.h $(CFLAGS_STAMP)
	$(call say,HDR,$<)
	@mkdir -p $(dir $@)
	$(Q)$(compile) -x c -fsyntax-only -MF $@.d -MT $@ $< && touch $@

# The harnesses of tests/fuzz/ (clang: libFuzzer + ASan + UBSan).
fuzz-build:
	$(Q)$(MAKE) B=build-fuzz SAN=fuzz CC=clang fuzzers

fuzzers: $(FUZZERS)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run

$(B)/obj/%.o: %.c $(CFLAGS_STAMP)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(compile) -c $< -o $@

# The agent guide that `dsight help agent` prints (client/cmd_help.c).
GUIDE_OBJ := $(B)/obj/gen/agent_guide.o
$(B)/gen/agent_guide.c: doc/agent-guide.md scripts/embed-text
	$(call say,EMBED,$@)
	@mkdir -p $(dir $@)
	$(Q)scripts/embed-text $@ dsight_agent_guide doc/agent-guide.md

# web/ itself: its mtime changes when a file is added or removed.
$(B)/gen/web_assets.c: $(WEB_FILES) scripts/embed-web web
	$(call say,EMBED,$@)
	@mkdir -p $(dir $@)
	$(Q)scripts/embed-web $@ $(WEB_FILES)

# Exact arithmetic (correctly rounded sums, timeline bucket edges
# start + i*width): no fused multiply-add may change a rounding.
# (override: a command-line EXACT_CFLAGS cannot drop it either)
$(B)/obj/common/query/qstat.o $(B)/obj/common/query/qbucket.o $(B)/obj/common/base/qsum.o: override EXACT_CFLAGS := -ffp-contract=off

$(B)/obj/gen/%.o: $(B)/gen/%.c $(CFLAGS_STAMP)
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(compile) -c $< -o $@

$(LIBDSIGHT): $(call obj,$(COMMON_SRC)) $(patsubst $(B)/gen/%.c,$(B)/obj/gen/%.o,$(GEN_SRC))
	$(call say,AR,$@)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(LIBPROTO): $(call obj,$(PROTOCOL_SRC))
	$(call say,AR,$@)
	@rm -f $@
	$(Q)ar rcs $@ $^

# link OBJECTS: one program from its objects and the two libraries.
link = $(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(1) $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

$(FULL): $(call obj,$(CLIENT_SRC)) $(GUIDE_OBJ) $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_LDFLAGS) $(CLIENT_LDFLAGS) -o $@ $(call obj,$(CLIENT_SRC)) $(GUIDE_OBJ) \
		$(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

$(LIBCLIENT): $(call obj,$(filter-out client/main.c,$(CLIENT_SRC)))
	$(call say,AR,$@)
	@rm -f $@
	$(Q)ar rcs $@ $^

# -static glibc warns that getaddrinfo and dlopen (used by parts of
# libcrypto, and by httpc's libcurl loader, that this program never calls:
# it hands HTTP addresses to the full program) need the shared libraries
# at run time.
$(B)/bin/dsight: $(call obj,$(ENTRY_SRC)) $(LIBCLIENT) $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@) && rm -f $@
	$(Q)$(CC) $(ALL_LDFLAGS) $(CLIENT_LDFLAGS) -o $@ $(call obj,$(ENTRY_SRC)) $(LIBCLIENT) \
		$(LIBPROTO) $(LIBDSIGHT) $(or $(ENTRY_LIBS),$(PKG_LIBS)) 2>&1 | \
		{ grep -v 'statically linked applications requires at runtime\|in function .\(dlfcn_\|BIO_\|DSO_\)\|(httpc\.o): in function' >&2 || true; }; \
		test -x $@

$(B)/bin/dsightd: $(call obj,$(DAEMON_SRC)) $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(call link,$(call obj,$(DAEMON_SRC))) $(DAEMON_LIBS)

$(SHLIB): $(call obj,$(SHLIB_SRC)) $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libdsight.so -Wl,--no-undefined -o $@ \
		$(call obj,$(SHLIB_SRC)) -Wl,--whole-archive $(LIBPROTO) $(LIBDSIGHT) \
		-Wl,--no-whole-archive $(SHLIB_LIBS)

# The floor of a one-shot query (scripts/bench/session): the C library only.
$(B)/bin/floor-query: $(call obj,scripts/tools/floor-query.c) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $<

$(B)/bin/%: $(B)/obj/scripts/tools/%.o $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(call link,$(filter %.o,$^))

# A tool too big for one file keeps its other modules in scripts/tools/<tool>/*.c.
$(foreach t,$(TOOL_SRC),$(eval $(B)/bin/$(basename $(notdir $(t))): $(call obj,$(wildcard scripts/tools/$(basename $(notdir $(t)))/*.c))))

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(call link,$<)

# A harness links the client's modules (not its main) for the CLI parser.
$(B)/fuzz/%: $(B)/obj/tests/fuzz/%.o $(call obj,$(filter-out client/main.c,$(CLIENT_SRC))) $(LIBPROTO) $(LIBDSIGHT) $(LDFLAGS_STAMP)
	$(call say,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $(LIBPROTO) $(LIBDSIGHT) $(PKG_LIBS)

# Man pages carry @VERSION@ in their sources; the built copies the version.
$(B)/man/%: man/% Makefile
	$(call say,MAN,$@)
	@mkdir -p $(dir $@)
	$(Q)sed 's/@VERSION@/$(VERSION)/g' $< >$@

BINDIR := $(DESTDIR)$(PREFIX)/bin
MANDIR := $(DESTDIR)$(PREFIX)/share/man
LIBEXECDIR := $(DESTDIR)$(PREFIX)/libexec/dsight
# The agent guide as a skill file coding agents load (front matter: name,
# description).
SHAREDIR := $(DESTDIR)$(PREFIX)/share/dsight

install: all
	install -d $(BINDIR)
	install -m 755 $(BINS) $(BINDIR)/
	install -d $(LIBEXECDIR)
	install -m 755 $(FULL) $(LIBEXECDIR)/
	$(foreach s,$(sort $(patsubst .%,%,$(suffix $(MANS)))),install -d $(MANDIR)/man$(s) && install -m 644 $(filter %.$(s),$(MANS)) $(MANDIR)/man$(s)/;)
	install -d $(SHAREDIR)
	install -m 644 doc/agent-guide.md $(SHAREDIR)/SKILL.md

uninstall:
	rm -f $(SHAREDIR)/SKILL.md
	rmdir $(SHAREDIR) 2>/dev/null || true
	rm -f $(addprefix $(BINDIR)/,$(notdir $(BINS)))
	rm -f $(LIBEXECDIR)/dsight
	rmdir $(LIBEXECDIR) 2>/dev/null || true
	rm -f $(foreach m,$(MAN_SRC),$(MANDIR)/man$(patsubst .%,%,$(suffix $(m)))/$(notdir $(m)))

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(ALL_OBJS:.o=.d) $(HDR_OKS:=.d)

#!/usr/bin/env bash
# The Makefile's promises to whoever builds dsight: a missing library is named
# with its Debian package, the link choice is checked, the version comes from
# the Makefile alone (binaries and man pages), changed flags rebuild objects,
# V=1 shows commands, uninstall removes exactly what install puts, and a
# builder's CFLAGS / CPPFLAGS / LDFLAGS add to the tree's flags without
# dropping any (-Werror only with DEVELOPER=1).
# Builds only single files, in a private build directory.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B="$tmp/b"
BUILD=${DSIGHT_BUILD:-$PWD/build}
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; shift; for f in "$@"; do sed 's/^/#   /' "$f" | head -20; done; }

# 1. a missing pkg-config module fails before compiling, naming it
if make -s B="$B" PKGS="jansson dsight-no-such-lib" deb.dsight-no-such-lib=libdsight-no-such-dev all \
	>"$tmp/out" 2>"$tmp/err"; then
	notok "a missing library stops the build" "$tmp/err"
elif grep -q "dsight-no-such-lib (Debian: libdsight-no-such-dev)" "$tmp/err" && [ ! -e "$B/obj" ]; then
	ok "a missing library stops the build, named with its Debian package"
else
	notok "a missing library stops the build, named with its Debian package" "$tmp/err"
fi

# 2. LINK=static without an archive, and an unknown LINK, are errors
if ! make -s B="$B" STATIC_LIBS="crypto dsightnosuch" all >/dev/null 2>"$tmp/err" &&
	grep -q "LINK=static needs libdsightnosuch.a" "$tmp/err"; then
	ok "LINK=static names a missing static archive"
else
	notok "LINK=static names a missing static archive" "$tmp/err"
fi
if ! make -s B="$B" LINK=sideways all >/dev/null 2>"$tmp/err" &&
	grep -q "LINK must be static or dynamic, not 'sideways'" "$tmp/err"; then
	ok "an unknown LINK value is refused"
else
	notok "an unknown LINK value is refused" "$tmp/err"
fi

# 3. one version: the Makefile's, in the binary and the built man pages
version=$(sed -n 's/^VERSION := //p' Makefile)
got=$("$BUILD/bin/dsight" --version 2>&1)
if [ -n "$version" ] && [ "$got" = "dsight $version" ]; then
	ok "dsight --version prints the Makefile's version"
else
	echo "not ok - dsight --version prints the Makefile's version"; echo "#   got '$got', Makefile '$version'"
fi
if make -s B="$B" "$B/man/dsight.1" "$B/man/dsight-report.5" 2>"$tmp/err" &&
	grep -q "^\.TH DSIGHT 1 .*\"dsight $version\"" "$B/man/dsight.1" &&
	grep -q "\"dsight $version\"" "$B/man/dsight-report.5" &&
	! grep -rqF "dsight $version" man/; then
	ok "man pages get the version at build time (sources carry none)"
else
	notok "man pages get the version at build time (sources carry none)" "$tmp/err"
fi

# 4. changed flags make objects out of date; V=1 shows the command
o="$B/obj/common/base/err.o"
make B="$B" "$o" >"$tmp/out" 2>&1
if grep -q "^  CC     common/base/err.c" "$tmp/out" && ! grep -q -- "-c common/base/err.c" "$tmp/out"; then
	ok "quiet by default: one short line per object"
else
	notok "quiet by default: one short line per object" "$tmp/out"
fi
if make -q B="$B" "$o"; then
	ok "an object is up to date when nothing changed"
else
	echo "not ok - an object is up to date when nothing changed"
fi
if make -q B="$B" OPT=-O1 "$o"; then
	echo "not ok - a changed flag makes the object out of date"
else
	ok "a changed flag makes the object out of date"
fi
make B="$B" V=1 "$o" >"$tmp/out" 2>&1
if grep -q -- "-O2 .*-c common/base/err.c -o $o" "$tmp/out"; then
	ok "V=1 prints the command; the object is rebuilt with the flags restored"
else
	notok "V=1 prints the command; the object is rebuilt with the flags restored" "$tmp/out"
fi

# 5. uninstall removes what install places, and nothing else
root="$tmp/root"
mkdir -p "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/man/man5" "$root/usr/share/dsight"
for f in bin/dsight bin/dsightd bin/other share/man/man1/dsight.1 share/man/man1/dsightd.1 \
	share/man/man1/dsight-query.1 share/man/man5/dsight-report.5 share/man/man1/other.1 \
	share/dsight/SKILL.md; do
	echo x >"$root/usr/$f"
done
make -s uninstall DESTDIR="$root" PREFIX=/usr >"$tmp/out" 2>&1
left=$(cd "$root/usr" && find . -type f | sort | tr '\n' ' ')
if [ "$left" = "./bin/other ./share/man/man1/other.1 " ]; then
	ok "make uninstall removes the binaries, man pages and SKILL.md, nothing else"
else
	echo "not ok - make uninstall removes the binaries, man pages and SKILL.md, nothing else"; echo "#   left: $left"
fi

# 6. the builder's flags come last and drop nothing the tree needs
# (make -n V=1: the commands, nothing built)
q="$B/obj/common/query/qstat.o"
make -n -B V=1 B="$B" CFLAGS="-O0 -ffp-contract=fast" CPPFLAGS=-DDSIGHT_T0920 "$o" "$q" \
	>"$tmp/out" 2>&1
ecmd=$(grep -- "-c common/base/err.c" "$tmp/out")
qcmd=$(grep -- "-c common/query/qstat.c" "$tmp/out")
missing=""
for f in -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -fPIC -MMD -MP -Icommon -Iprotocol \
	-D_GNU_SOURCE -DDSIGHT_VERSION= -DDSIGHT_T0920 -O0; do
	case " $ecmd" in *" $f"*) ;; *) missing="$missing $f" ;; esac
done
if [ -n "$ecmd" ] && [ -z "$missing" ]; then
	ok "make CFLAGS=-O0 CPPFLAGS=-DX keeps -std=c11, the warnings, -fPIC, -MMD -MP, -Icommon"
else
	notok "make CFLAGS=-O0 CPPFLAGS=-DX keeps -std=c11, the warnings, -fPIC, -MMD -MP, -Icommon (missing:$missing)" "$tmp/out"
fi
if [ "$(printf '%s\n' "$qcmd" | grep -o -- '-ffp-contract=[a-z]*' | tail -1)" = "-ffp-contract=off" ]; then
	ok "-ffp-contract=off on the exact-arithmetic objects comes after the builder's CFLAGS"
else
	notok "-ffp-contract=off on the exact-arithmetic objects comes after the builder's CFLAGS" "$tmp/out"
fi
make -n -B V=1 B="$B" DEVELOPER= "$o" >"$tmp/plain" 2>&1
make -n -B V=1 B="$B" DEVELOPER=1 "$o" >"$tmp/dev" 2>&1
if ! grep -q -- "-Werror" "$tmp/plain" && grep -q -- "-c common/base/err.c" "$tmp/plain" &&
	grep -- "-c common/base/err.c" "$tmp/dev" | grep -q -- "-Werror"; then
	ok "-Werror only with DEVELOPER=1"
else
	notok "-Werror only with DEVELOPER=1" "$tmp/plain" "$tmp/dev"
fi
make -n -B V=1 B="$B" LDFLAGS=-Wl,-O1 SAN=1 "$B/bin/dsight" >"$tmp/out" 2>&1
if grep -- "-o $B/bin/dsight " "$tmp/out" | grep -q -- "-fsanitize=address.*-Wl,-O1"; then
	ok "make LDFLAGS=... keeps the sanitizer link flags"
else
	notok "make LDFLAGS=... keeps the sanitizer link flags" "$tmp/out"
fi

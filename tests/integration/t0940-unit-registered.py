#!/usr/bin/env python3
"""Every unit test runs: each TEST(name) of tests/unit/test_*.c is started by
a RUN(name) in its file's main, once (a TEST left out of main compiles,
since testlib.h's TEST is a static function, and would never run)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
unit = os.path.join(tap.TOP, "tests", "unit")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
files = sorted(f for f in os.listdir(unit) if re.fullmatch(r"test_\w+\.c", f))
t.ok(files, "unit test files found (%d)" % len(files))
total = 0
for f in files:
    with open(os.path.join(unit, f), encoding="utf-8") as fh:
        code = COMMENT.sub("", fh.read())
    tests = re.findall(r"^\s*TEST\(\s*(\w+)\s*\)", code, re.M)
    runs = re.findall(r"\bRUN\(\s*(\w+)\s*\)", code)
    total += len(tests)
    unrun = [n for n in tests if n not in runs]
    twice = sorted({n for n in runs if runs.count(n) > 1})
    t.ok(tests and not unrun and not twice,
         "%s: its %d TEST(...) each RUN(...) once" % (f, len(tests)),
         "never run: %s; run twice: %s" % (", ".join(unrun) or "-", ", ".join(twice) or "-"))
t.ok(total > 0, "%d unit tests registered" % total)
sys.exit(t.done())

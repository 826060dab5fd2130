#!/usr/bin/env python3
"""Short parameter lists (doc/development.md "Changing the code"): no
function defined in common/, protocol/, daemon/ or client/ takes more than
PARAMS_MAX parameters.  Values that travel together go in a struct (a
window, a span of bins, the callbacks of a walk, a job's options); eight
leaves room for the fixed shapes of library callbacks (libmicrohttpd's
request handler takes eight).

The scan reads function definitions (a name, a parenthesised list, then
`{` on the next line, as the tree's style writes them), comments removed.
Standard library only."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

PARAMS_MAX = 8
ROOTS = ["common", "protocol", "daemon", "client"]
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
DEFINITION = re.compile(
    r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?[A-Za-z_][\w\s\*]*?\b([a-z_]\w*)"
    r"\s*\(([^;{()]*(?:\([^()]*\)[^;{()]*)*)\)\s*\n\{", re.M)


def count_params(text):
    text = text.strip()
    if text in ("", "void"):
        return 0
    depth, n = 0, 1
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


def definitions(path):
    with open(path, encoding="utf-8") as fh:
        code = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), fh.read())
    for m in DEFINITION.finditer(code):
        if m.group(1) in ("if", "while", "for", "switch", "return"):
            continue
        line = code.count("\n", 0, m.start()) + 1
        yield m.group(1), count_params(m.group(2)), line


t = tap.T()
os.chdir(tap.TOP)
seen, over = 0, []
for root in ROOTS:
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            path = os.path.join(d, f)
            for name, n, line in definitions(path):
                seen += 1
                if n > PARAMS_MAX:
                    over.append("%s:%d %s takes %d" % (path, line, name, n))
t.ok(seen > 500, "function definitions found (%d)" % seen)
t.ok(not over, "none takes more than %d parameters" % PARAMS_MAX,
     "; ".join(over))

# the scan itself: a definition over the bound is caught, a call is not
sample = ("static int f(int a, int b, int c, int d, int e, int f, int g,\n"
          "             int h, void (*fn)(int, int))\n{\n\treturn g(1, 2);\n}\n")
found = [(m.group(1), count_params(m.group(2))) for m in DEFINITION.finditer(sample)]
t.ok(found == [("f", 9)], "the scan counts a definition's parameters", found)
sys.exit(t.done())

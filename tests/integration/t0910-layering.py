#!/usr/bin/env python3
"""The layering of doc/architecture.md, checked: every `#include "..."` in
common/, protocol/, daemon/, client/ and scripts/*.c goes down the written
order, no two modules need each other, and arrays grow through base/vec.

  base     -> nothing
  ingest   -> base
  store    -> base
  query    -> base, store, ingest
  report   -> base, ingest, store, query
  protocol -> base
  daemon, client, scripts (tools) -> anything below them, not each other

A module is a .c and its .h (a header alone is a module of its own).  Two
graphs are checked for cycles: the include graph (a .c including another
module's header is an edge) and, over the objects of DSIGHT_BUILD, the link
graph (a module calling a function another module defines is an edge), so
a cycle hidden behind one shared header (qkinds.h declaring every kind) is
caught too.  Finally no `realloc(` outside common/base/: arrays grow with
base/vec (or base/buf for bytes).

Standard library only (plus nm from binutils for the link graph)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
os.chdir(tap.TOP)

ALLOWED = {
    "base": set(),
    "ingest": {"base"},
    "store": {"base"},
    "query": {"base", "store", "ingest"},
    "report": {"base", "ingest", "store", "query"},
    "protocol": {"base"},
    "daemon": {"base", "ingest", "store", "query", "report", "protocol"},
    "client": {"base", "ingest", "store", "query", "report", "protocol"},
    "scripts": {"base", "ingest", "store", "query", "report", "protocol"},
}
# Where a quoted include is looked up after the including file's directory
# (the Makefile's -I order).
INCLUDE_DIRS = ["common", "protocol"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    parts = path.split("/")
    if parts[0] == "common":
        return parts[1]
    return parts[0]


def module_of(path):
    return os.path.splitext(path)[0]


def sources():
    out = []
    for top in ("common", "protocol", "daemon", "client"):
        for dp, dns, fns in os.walk(top):
            dns.sort()
            out += [os.path.join(dp, f) for f in sorted(fns) if f.endswith((".c", ".h"))]
    for dp, dns, fns in os.walk("scripts"):
        dns.sort()
        out += [os.path.join(dp, f) for f in sorted(fns) if f.endswith((".c", ".h"))]
    return out


def strip_comments(text):
    """text without its comments (lines kept, for the line numbers)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)


def resolve(src, name):
    for d in [os.path.dirname(src)] + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None


def cycles(graph):
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycle_detail(comp, graph, why):
    lines = []
    for a in comp:
        for b in sorted(graph.get(a, ())):
            if b in comp:
                lines.append("%s -> %s (%s)" % (a, b, "; ".join(sorted(why[(a, b)]))))
    return "\n".join(lines)


files = sources()
upward, unresolved = [], []
inc_graph, inc_why = {}, {}
realloc_sites = []
for f in files:
    with open(f, encoding="utf-8") as fh:
        text = fh.read()
    code = strip_comments(text)
    for n, line in enumerate(code.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = resolve(f, m.group(1))
        if target is None:
            unresolved.append("%s:%d: \"%s\"" % (f, n, m.group(1)))
            continue
        la, lb = layer_of(f), layer_of(target)
        if la != lb and lb not in ALLOWED.get(la, set()):
            upward.append("%s:%d: %s includes %s (%s -> %s)" % (f, n, f, target, la, lb))
        a, b = module_of(f), module_of(target)
        if a != b:
            inc_graph.setdefault(a, set()).add(b)
            inc_why.setdefault((a, b), set()).add("%s:%d" % (f, n))
    if not f.startswith("common/base/"):
        for n, line in enumerate(code.splitlines(), 1):
            if re.search(r"\brealloc\s*\(", line):
                realloc_sites.append("%s:%d: %s" % (f, n, line.strip()))

t.ok(len(files) > 100 and inc_graph, "the sources were found (%d files)" % len(files))
t.ok(not unresolved, "every quoted include names a file of the tree", "\n".join(unresolved))
t.ok(not upward, "every include goes down the layers (base, ingest|store, query, report; "
     "protocol; programs)", "\n".join(upward))
inc_cycles = cycles(inc_graph)
t.ok(not inc_cycles, "no include cycle between modules",
     "\n\n".join(cycle_detail(c, inc_graph, inc_why) for c in inc_cycles))
t.ok(not realloc_sites, "no realloc( outside common/base/ (grow with base/vec)",
     "\n".join(realloc_sites))


# ---- the link graph: who calls whom, from the objects ----------------------
def nm(paths, defined):
    """{object path: set of symbols} from one nm run over every object:
    the functions and data each defines (defined), or the symbols each
    uses from elsewhere; None when nm fails."""
    args = ["nm", "-P", "-A", "--defined-only" if defined else "--undefined-only"] + paths
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None
    out = {p: set() for p in paths}
    for line in r.stdout.splitlines():
        path, _, rest = line.partition(": ")
        parts = rest.split()
        if path in out and len(parts) >= 2 and (not defined or parts[1] in "TDBRCG"):
            out[path].add(parts[0])
    return out


objroot = os.path.join(tap.BUILD, "obj")
objs = {}
for f in files:
    if f.endswith(".c"):
        o = os.path.join(objroot, os.path.splitext(f)[0] + ".o")
        if os.path.isfile(o):
            objs[module_of(f)] = o
if len(objs) < 50:
    t.skip("no link cycle between modules", "no objects under %s (build first)" % objroot)
else:
    owner, needs, failed = {}, {}, []
    paths = [objs[m] for m in sorted(objs)]
    defs, uses = nm(paths, True), nm(paths, False)
    if defs is None or uses is None:
        failed = paths
    else:
        for mod in sorted(objs):
            for s in defs[objs[mod]]:
                owner.setdefault(s, mod)
            needs[mod] = uses[objs[mod]]
    link_graph, link_why = {}, {}
    for mod, u in needs.items():
        for s in u:
            b = owner.get(s)
            if b and b != mod:
                link_graph.setdefault(mod, set()).add(b)
                link_why.setdefault((mod, b), set()).add(s)
    link_cycles = cycles(link_graph)
    t.ok(not failed and not link_cycles, "no link cycle between modules (%d objects)" % len(objs),
         "nm failed" * bool(failed) + "\n\n".join(
             cycle_detail(c, link_graph, link_why) for c in link_cycles))


# ---- every header compiles alone (make hdr-check) ---------------------------
# in a tree of its own beside the build under test (B=DSIGHT_BUILD/hdr-tree:
# the build's flag stamp is not touched), kept between runs: a header is
# compiled again only when it or one it includes changed
r = subprocess.run(["make", "-s", "-j2", "B=" + os.path.join(tap.BUILD, "hdr-tree"), "hdr-check"],
                   capture_output=True, text=True)
t.ok(r.returncode == 0, "make hdr-check: every header compiles alone",
     (r.stdout + r.stderr)[-3000:])

sys.exit(t.done())

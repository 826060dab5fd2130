#!/usr/bin/env python3
# tests/run: slow (minutes in the full tier: a clean clone starts it first)
"""The catalog at any request count: dsight's extension tables beside the
schema-v1 catalog row.  Another schema-v1 reader (Python's sqlite3) sees
every request while the row is at most 32 MiB, and the marker with empty
collections above it; the request-family kinds answer byte-identically
from the extension (SQL selection and the exact fallback), from the v1 row
alone (the dsight_ tables dropped from a copy) and from the evidence
document; a cache marked external without its tables asks for a rebuild;
duplicate request ids and a truncated collection fail the build clearly
and keep the previous report."""
import json
import os
import shutil
import sqlite3
import sys

import tap

t = tap.T()
DS = tap.binpath("dsight")
GEN = tap.binpath("gen-capture")
PARITY = tap.binpath("query-parity")
COLLECTIONS = ("requests", "sessions", "server_spans", "iterations")


def gen(n):
    path = os.path.join(t.tmp, "r%d.json" % n)
    r = tap.run([GEN, "--preset", "small", "--requests", str(n), "-o", path])
    t.ok(r.returncode == 0, "gen-capture --requests %d" % n, r.stderr)
    return path


def build(doc, out):
    return tap.run([DS, "build", doc, "-o", out], timeout=600)


def row(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    text = con.execute("SELECT json FROM catalog").fetchone()[0]
    con.close()
    return text


def v1_copy(src, dst, whole_doc=None):
    """A copy of the cache as another builder would write it: the dsight_
    tables dropped, and (whole_doc given) the catalog row rewritten whole."""
    shutil.copy(src, dst)
    con = sqlite3.connect(dst)
    if whole_doc is not None:
        cat = json.loads(row(src))
        cat.pop("dsight_collections", None)
        for k in COLLECTIONS:
            cat[k] = whole_doc[k]
        con.execute("UPDATE catalog SET json = ?",
                    (json.dumps(cat, ensure_ascii=False, separators=(",", ":")),))
    names = [r_[0] for r_ in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'dsight_%'"
        " AND name NOT LIKE 'dsight_request_search_%'")]
    for n in names:
        con.execute('DROP TABLE "%s"' % n)
    con.commit()
    con.execute("VACUUM")
    con.close()


def parity(doc, cache, label, env=None, random=150, kinds=None, every=4):
    """query-parity over doc and cache: the whole matrix on the plain build
    in the full tier; in the quick tier and on the sanitizer build
    (tap.matrix) a short random sample and every `every`-th fixed set
    (each kind's sets rotate through the sample)."""
    random = tap.matrix(random, max(10, random // 8))
    e = dict(os.environ)
    e.update(env or {})
    args = [PARITY, doc, cache, "--random", str(random), "--every", str(tap.matrix(1, every))]
    if kinds:
        args += ["--kinds", ",".join(kinds)]
    r = tap.run(args, env=e, timeout=1800)
    bad = [l for l in r.stdout.splitlines() if l.startswith("not ok")]
    t.ok(r.returncode == 0 and not bad, "parity: %s" % label, "\n".join(bad[:10]) + r.stderr[-2000:])


# ---- a catalog row within 32 MiB: complete for other readers ----
small = gen(2000)
with open(small, encoding="utf-8") as f:
    small_doc = json.load(f)
rep = os.path.join(t.tmp, "small")
r = build(small, rep)
t.ok(r.returncode == 0 and "warning" not in r.stderr, "2,000 requests: built without a warning", r.stderr)
db = os.path.join(rep, "trace-data.sqlite")
cat = json.loads(row(db))
t.ok("dsight_collections" not in cat, "2,000 requests: no external marker in the v1 row")
for k in COLLECTIONS:
    t.ok(cat[k] == small_doc[k], "2,000 requests: a schema-v1 reader sees every element of %s" % k,
         "%d of %d" % (len(cat[k]), len(small_doc[k])))
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
meta = dict(con.execute("SELECT key, value FROM dsight_meta"))
gen_row = con.execute("SELECT generation FROM catalog").fetchone()[0]
t.eq((meta.get("extension"), meta.get("generation")), ("1", gen_row),
     "dsight_meta: extension 1 and the catalog row's generation")
t.eq(con.execute("SELECT count(*) FROM dsight_requests").fetchone()[0], 2000, "dsight_requests: one row per request")
t.eq(con.execute("SELECT json FROM dsight_requests WHERE id = 'req-00007'").fetchone()[0],
     json.dumps(small_doc["requests"][7], ensure_ascii=False, separators=(",", ":")),
     "dsight_requests.json: the element's compact JSON")
ws = [w for (w,) in con.execute("SELECT worker FROM dsight_request_workers WHERE request = 'req-00008' ORDER BY rowid")]
t.eq(ws, small_doc["requests"][8]["workers"], "dsight_request_workers: the request's workers")
core = json.loads(con.execute("SELECT json FROM dsight_core").fetchone()[0])
t.ok(all(core[k] == [] for k in COLLECTIONS) and core["meta"] == small_doc["meta"],
     "dsight_core: the catalog without the collections")
con.close()

parity(small, db, "2,000 requests, extension (SQL selections)")
# DSIGHT_NO_PUSHDOWN is read by dataset_select alone, which only these
# kinds call (the request family's lists, groups and timeline): the other
# kinds' answers are the run above's, so only these run again (each
# fallback query parses the 2,000 requests: the quick tier samples more
# thinly)
parity(small, db, "2,000 requests, extension (exact fallback)", {"DSIGHT_NO_PUSHDOWN": "1"}, random=60,
       kinds=["requests", "timeline", "server_spans", "sessions", "iterations"], every=12)
v1 = os.path.join(t.tmp, "v1-small.sqlite")
v1_copy(db, v1)
parity(small, v1, "2,000 requests, dsight_ tables dropped (v1 row)")

def variant(name, edit, queries):
    """Builds the 2,000-request document as edit(doc) changes it and checks
    that each query answers the same bytes from the cache and from the
    document."""
    slug = name.replace(" ", "-")
    doc = os.path.join(t.tmp, slug + ".json")
    d = json.loads(json.dumps(small_doc))
    edit(d)
    with open(doc, "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)
    rep = os.path.join(t.tmp, slug)
    r = build(doc, rep)
    t.ok(r.returncode == 0, "%s: built" % name, r.stderr)
    for args in queries:
        outs = [tap.run([DS, "query", src, *args]) for src in (os.path.join(rep, "trace-data.sqlite"), doc)]
        t.ok(outs[0].returncode == 0 and outs[0].stdout == outs[1].stdout,
             "%s, %s: cache = document" % (name, " ".join(args)),
             (outs[0].stderr, outs[0].stdout[:300], outs[1].stdout[:300]))


# a NUL inside a searched string: the trigram index must not lose the
# strings after it (its tokenizer stops at a NUL)
def nul_conversation(d):
    d["requests"][3]["conversation"] = "c\u0000d"


variant("a NUL in a conversation", nul_conversation,
        [["requests", "--search", needle, "--fields", "id"] for needle in ("ecode-0", "Conv", "d")])


# list pages are read without spans and lifecycle (SQLite json_remove),
# a timeline of requests from the typed columns alone: every value keeps
# its exact text, escapes and numbers included
def odd_values(d):
    d["requests"][5]["conversation"] = "q\"b\\s\u0001\u2028\U0001F600\u0000z"
    d["requests"][6]["client_kind"] = "\u00e9t\u00e9 \t tab"
    d["requests"][7]["engine"] = [{"x": -0.0, "y": 1e300, "z": 2.5e-07, "w": 9007199254740993,
                                   "v": 1.0, "u": [None, True, False, {}], "s": "\ud7ff"}]
    d["requests"][8]["spans"] = []
    d["requests"][9].pop("lifecycle", None)
    d["requests"][10]["spans"] = "not an array"
    # the timeline reads start/end/first/ttft_ms from the typed columns
    d["requests"][11]["first"] = 9007199254740993
    d["requests"][12]["first"] = None
    d["requests"][13]["ttft_ms"] = 700
    d["requests"][14]["first"] = 3
    d["requests"][15]["start"] = 0


variant("odd values in requests", odd_values,
        (["requests", "--limit", "20"], ["requests", "--sort", "-span_count", "--limit", "50"],
         ["requests", "--sort", "id", "--offset", "1990"],
         ["requests", "--fields", "id,engine,conversation,span_count", "--limit", "12"],
         ["timeline", "--of", "requests", "--bucket", "0.5"],
         ["timeline", "--of", "requests", "--worker", "decode-0", "--to", "8", "--bucket", "0.25"],
         ["requests", "--group-by", "session", "--limit", "30"]))

# another build's extension over a complete row: the row is used
stale = os.path.join(t.tmp, "stale.sqlite")
shutil.copy(db, stale)
con = sqlite3.connect(stale)
con.execute("UPDATE dsight_meta SET value = 'x' WHERE key = 'generation'")
con.commit()
con.close()
r = tap.run([DS, "query", stale, "requests", "--limit", "1"])
t.ok(r.returncode == 0 and json.loads(r.stdout)["total"] == 2000,
     "an extension from another build beside a complete row: the row answers", r.stderr)

# ---- over 32 MiB: the marker, empty collections and the warning ----
big = gen(18000)
with open(big, encoding="utf-8") as f:
    big_doc = json.load(f)
brep = os.path.join(t.tmp, "big")
r = build(big, brep)
t.ok(r.returncode == 0, "18,000 requests: built", r.stderr)
t.ok("other schema-v1 readers of trace-data.sqlite will see no requests" in r.stderr
     and "over 32 MiB" in r.stderr, "18,000 requests: the build warns on stderr", r.stderr)
bdb = os.path.join(brep, "trace-data.sqlite")
bcat = json.loads(row(bdb))
t.eq(bcat.get("dsight_collections"), "external", "18,000 requests: the v1 row carries the marker")
t.ok(all(bcat[k] == [] for k in COLLECTIONS), "18,000 requests: the v1 row's collections are empty")
r = tap.run([DS, "query", brep, "summary"])
t.ok(r.returncode == 0 and "dsight_collections" not in r.stdout
     and json.loads(r.stdout)["counts"]["requests"] == 18000,
     "summary counts every request and prints no marker", r.stdout[-300:] + r.stderr)
man = json.load(open(os.path.join(brep, "manifest.json")))
t.eq(man["counts"]["requests"], 18000, "manifest counts every request")
bv1 = os.path.join(t.tmp, "v1-big.sqlite")
v1_copy(bdb, bv1, whole_doc=big_doc)
# the request family at 18,000 requests: extension = v1 row = document
# (query-parity's full sets run at 2,000 above; these are the SQL paths).
# Each slow source parses its 18,000 requests per process (4-11 s a
# query): the quick tier takes every third query, the full tier all of them.
BIG_QUERIES = (["requests", "--limit", "5", "--offset", "17990"],
               ["requests", "--sort", "-ttft_ms,id", "--limit", "7", "--offset", "3"],
               ["requests", "--sort", "first", "--from", "10", "--to", "20", "--limit", "4"],
               ["requests", "--search", "SESS-12", "--sort", "-duration", "--limit", "3"],
               ["requests", "--search", "ü", "--limit", "2"],
               ["requests", "--worker", "decode-0", "--session", "sess-042", "--min-ttft-ms", "100"],
               ["request", "--request", "req-17999"],
               ["sessions", "--agent", "sess-077/sub-1", "--sort", "-requests"],
               ["sessions", "--from", "5", "--to", "6", "--limit", "3", "--offset", "2"],
               ["server_spans", "--sort", "-start", "--limit", "3"],
               ["iterations", "--rank", "1", "--sort", "-end", "--limit", "3"])
# The extension's answer (fast) is compared with one of the two slow
# sources in turn, so each of them still meets every kind of query (the
# full tier took 230 s, most of CI's longest program, comparing with both).
for i, q in enumerate(BIG_QUERIES[::tap.matrix(1, 3)]):
    other, label = ((bv1, "v1 row") if i % 2 == 0 else (big, "document"))
    outs = [tap.run([DS, "query", src] + q).stdout for src in (bdb, other)]
    t.ok(outs[0] and outs[0] == outs[1],
         "18,000 requests, %s: extension = %s" % (" ".join(q), label), outs[0][:300])

missing = os.path.join(t.tmp, "missing.sqlite")
v1_copy(bdb, missing)
r = tap.run([DS, "query", missing, "requests"])
t.ok(r.returncode == 1 and "%s: the request tables are missing or from another build; rebuild the report"
     % os.path.realpath(missing) in r.stderr, "marker without the tables: rebuild the report", r.stderr)
other = os.path.join(t.tmp, "other.sqlite")
shutil.copy(bdb, other)
con = sqlite3.connect(other)
con.execute("UPDATE dsight_meta SET value = 'x' WHERE key = 'generation'")
con.commit()
con.close()
r = tap.run([DS, "query", other, "summary"])
t.ok(r.returncode == 1 and "the request tables are missing or from another build; rebuild the report" in r.stderr,
     "marker with another build's tables: rebuild the report", r.stderr)

# ---- bad input: clear errors, the previous report kept ----
before = open(os.path.join(rep, "manifest.json")).read()
dup = os.path.join(t.tmp, "dup.json")
d = dict(small_doc)
d["requests"] = small_doc["requests"] + [dict(small_doc["requests"][1234])]
with open(dup, "w", encoding="utf-8") as f:
    json.dump(d, f, ensure_ascii=False)
r = build(dup, rep)
t.ok(r.returncode != 0 and "requests[2000].id: duplicate request id 'req-01234'" in r.stderr,
     "a duplicate request id: the error names it and its path", r.stderr)
t.eq(open(os.path.join(rep, "manifest.json")).read(), before, "a duplicate request id: the previous report is kept")
cut = os.path.join(t.tmp, "cut.json")
text = open(small, encoding="utf-8").read()
at = text.index('"id":"req-01000"')
with open(cut, "w", encoding="utf-8") as f:
    f.write(text[:at + 40])
r = build(cut, rep)
t.ok(r.returncode != 0 and ("unexpected end" in r.stderr.lower() or "premature" in r.stderr.lower()),
     "a truncated requests collection: a clear error", r.stderr)
t.eq(open(os.path.join(rep, "manifest.json")).read(), before, "a truncated collection: the previous report is kept")
r = tap.run([DS, "query", rep, "requests", "--limit", "0"])
t.ok(r.returncode == 0 and json.loads(r.stdout)["total"] == 2000, "the previous report still answers", r.stderr)

sys.exit(t.done())

#!/usr/bin/env python3
"""t0460-catalog-shards: the catalog shards of a progressive report.

A capture whose collections exceed 1 MiB gets index.html without them and
content-addressed catalog shards in detail/: every element of every
collection is in exactly one shard, a session shares its shard with all its
requests, session groups follow session start order and stay within the
512 KiB budget (a session larger than that gets a shard of its own and a
build warning naming it and its size), server spans and iterations are cut
by time; the id index maps every request and session id (code point order,
lookup shards of at most 512 KiB, each one's first id in index.html) to its
shard; the top lists equal `dsight query requests --sort -ttft_ms|-duration`;
the density counts the requests touching each of 512 bins; the search-text
shards hold, per catalog shard and in its order, each request's lowercased
id, session, agent, conversation, server ids and workers (those all the
requests of a session hold once for the session), joined by three
separators found in none of them.  A small capture
and --single-file keep the collections embedded.  The browser side is
tests/browser/catalog.test.mjs.
"""
import base64
import gzip
import hashlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")
GEN = tap.binpath("gen-capture")
BUDGET = 512 * 1024
N = 3000


def element(html, name):
    m = re.search(r'<script type="application/octet-stream" id="%s">([A-Za-z0-9+/=]*)</script>' % name, html)
    return json.loads(gzip.decompress(base64.b64decode(m.group(1)))) if m else None


LISTS = ["shards", "lookup", "summaries", "time_summaries", "search"]


def core_of(rep):
    """The page's core catalog with the index's descriptor lists (their own
    element) put back into catalog_shards; also the two elements as read."""
    html = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
    head, lists = element(html, "dsight-catalog"), element(html, "dsight-catalog-index")
    core = json.loads(json.dumps(head))
    if lists is not None and "catalog_shards" in core:
        core["catalog_shards"].update(lists)
    return core, head, lists


def shard_rows(rep, d):
    raw = open(os.path.join(rep, d["url"]), "rb").read()
    ok = (hashlib.sha256(raw).hexdigest() == d["sha256"] and d["url"] == "detail/%s.json.gz" % d["sha256"]
          and len(raw) == d["bytes"])
    text = gzip.decompress(raw)
    ok = ok and len(text) == d["decoded_bytes"] and hashlib.sha256(text).hexdigest() == d["decoded_sha256"]
    rows = json.loads(text)
    return rows, ok and len(rows) == d["count"]


ev_path = os.path.join(t.tmp, "capture.json")
g = tap.run([GEN, "--preset", "small", "--requests", str(N), "-o", ev_path])
t.ok(g.returncode == 0, "gen-capture --requests %d" % N, g.stderr)
doc = json.load(open(ev_path))
# searched text to lowercase, and a separator candidate inside it
doc["requests"][7]["conversation"] = "Straße-ÄÖÜ|ΣΑΣ~x"
# one request carries a large extra key: its session outgrows the budget
big = doc["requests"][N // 2]
big["padding"] = "x" * (BUDGET + 1000)
with open(ev_path, "w") as f:
    json.dump(doc, f)

rep = os.path.join(t.tmp, "report")
r = tap.run([DSIGHT, "build", ev_path, "-o", rep])
t.ok(r.returncode == 0, "dsight build", r.stderr)
warn = [ln for ln in r.stderr.splitlines() if "session %s holds" % big["session"] in ln]
t.ok(len(warn) == 1 and re.search(r"holds [0-9.]+ KiB of catalog JSON, over the 512 KiB", warn[0]),
     "the build warns about the oversized session, naming it and its size", r.stderr)

core, head, lists = core_of(rep)
ix = core.get("catalog_shards")
t.ok(lists is not None and set(lists) == set(LISTS) and isinstance(lists["shards"], list)
     and not any(k in head["catalog_shards"] for k in LISTS),
     "the descriptor lists are in their own element (#dsight-catalog-index), not in the core catalog",
     sorted(head["catalog_shards"]))
t.ok(ix is not None and core["requests"] == [] and core["sessions"] == [] and core["server_spans"] == []
     and core["iterations"] == [], "index.html holds the index, not the collections")
colls = ["requests", "sessions", "server_spans", "iterations"]
t.eq(ix["counts"], {c: len(doc[c]) for c in colls}, "index counts equal the collections")

# every shard verifies; every element exactly once, equal to the document's
seen = {c: {} for c in colls}
where = {}  # (kind, id) -> shard
all_ok = True
session_order = []
sb_ok = True
un_ok, un_seen = True, 0
for i, d in enumerate(ix["shards"]):
    rows, ok = shard_rows(rep, d)
    all_ok = all_ok and ok
    n = {c: 0 for c in colls}
    for c, ordinal, el in rows:
        name = colls[c]
        n[name] += 1
        all_ok = all_ok and ordinal not in seen[name] and el == doc[name][ordinal]
        seen[name][ordinal] = i
        if c in (0, 1):
            where[(c, el["id"])] = i
        if c == 1:
            session_order.append((el["start"], ordinal))
    all_ok = all_ok and all(d.get(c, 0) == n[c] for c in colls)
    # a shard holding sessions carries their own bounds (window queries
    # on sessions: its requests run past them)
    ss = [el for c, _, el in rows if c == 1]
    if ss:
        want = [min(x["start"] for x in ss), min(x["end"] for x in ss), max(x["start"] for x in ss),
                max(x["end"] for x in ss)]
        sb_ok = sb_ok and d.get("session_bounds") == want
    else:
        sb_ok = sb_ok and "session_bounds" not in d
    # an iteration shard counts its iterations without start (counted
    # apart by a window query, so a shard of them alone is never read)
    its = [el for c, _, el in rows if c == 3]
    if its:
        un_ok = un_ok and d.get("unaligned") == sum(1 for x in its if not isinstance(x.get("start"), (int, float)))
        un_seen += d.get("unaligned", 0)
    else:
        un_ok = un_ok and "unaligned" not in d
    if d["kind"] == "sessions":
        over = d["decoded_bytes"] > BUDGET
        if over:
            t.ok(n["sessions"] == 1 and any(el.get("id") == big["session"] for c, _, el in rows if c == 1),
                 "the only shard over the budget holds the oversized session alone")
    else:
        t.ok(d["decoded_bytes"] <= BUDGET and d["count"] <= 8192, "%s shard %d within the budget" % (d["kind"], i))
t.ok(all_ok, "every shard verifies (names, sizes, hashes, counts) and holds the document's elements")
t.ok(all(len(seen[c]) == len(doc[c]) for c in colls), "every element of every collection is in a shard",
     {c: (len(seen[c]), len(doc[c])) for c in colls})
t.ok(session_order == sorted(session_order), "session groups follow session start order")
t.ok(sb_ok, "each shard holding sessions has session_bounds, the min/max start and end of its sessions alone")
t.ok(un_ok and un_seen > 0, "each iteration shard counts its iterations without start in unaligned (%d in all)" % un_seen)
grouped = all(where.get((1, r_["session"])) == where[(0, r_["id"])]
              for r_ in doc["requests"] if (1, r_["session"]) in where)
t.ok(grouped, "every request shares its session's shard")
t.ok(sum(1 for d in ix["shards"] if d["kind"] == "sessions" and d["decoded_bytes"] > BUDGET) == 1,
     "exactly one session shard is over the budget (the oversized session)")
for kind in ("server_spans", "iterations"):
    starts = []
    for d in ix["shards"]:
        if d["kind"] == kind:
            starts += [el["start"] for c, _, el in shard_rows(rep, d)[0] if el["start"] is not None]
    t.ok(starts == sorted(starts), "%s shards are cut by time" % kind)

# request summaries: rows [shard, [[ordinal, keys...]]] in summary shards
sf = ix.get("summary_fields") or []
sum_ok = bool(sf) and bool(ix.get("summaries"))
covered = {}
for k, d in enumerate(ix.get("summaries") or []):
    rows, ok = shard_rows(rep, d)
    sum_ok = sum_ok and ok and (d["decoded_bytes"] <= BUDGET or len(rows) == 1)
    for shard, lst in rows:
        sum_ok = sum_ok and ix["shards"][shard].get("summary") == k
        covered[shard] = len(lst)
        for row in lst:
            el = doc["requests"][row[0]]
            want = [len(el.get("spans", [])) if f == "span_count" else el.get(f) for f in sf]
            sum_ok = sum_ok and row[1:] == want and seen["requests"][row[0]] == shard
sess_shards = {i: d.get("requests", 0) for i, d in enumerate(ix["shards"]) if d["kind"] == "sessions" and d.get("requests")}
t.ok(sum_ok and covered == sess_shards,
     "summary shards (within 512 KiB) hold every session shard's requests' keys (%s)" % ", ".join(sf))

# time summaries: rows [shard, pos, ordinal, keys...] in start order; (shard,
# pos) is the request's place among its catalog shard's requests
pos_of = {}
for i, d in enumerate(ix["shards"]):
    if d["kind"] == "sessions":
        reqs = [o for c, o, _ in shard_rows(rep, d)[0] if c == 0]
        for p, o in enumerate(reqs):
            pos_of[o] = (i, p)
tm_ok, tm_seen, order = bool(ix.get("time_summaries")), [], []
for d in ix.get("time_summaries") or []:
    rows, ok = shard_rows(rep, d)
    tm_ok = tm_ok and ok and d["decoded_bytes"] <= BUDGET
    lo = [min(r[3 + sf.index("start")] for r in rows), min(r[3 + sf.index("end")] for r in rows),
          max(r[3 + sf.index("start")] for r in rows), max(r[3 + sf.index("end")] for r in rows)]
    tm_ok = tm_ok and d["bounds"] == lo
    for shard, p, o, *vals in rows:
        el = doc["requests"][o]
        want = [len(el.get("spans", [])) if f == "span_count" else el.get(f) for f in sf]
        tm_ok = tm_ok and vals == want and pos_of.get(o) == (shard, p)
        tm_seen.append(o)
        order.append((el["start"], o))
t.ok(tm_ok and sorted(tm_seen) == list(range(len(doc["requests"]))) and order == sorted(order),
     "time summary shards hold every request once, in start order, with its catalog shard, position and keys")

# search-text shards: rows [shard, text, us, rs, gs] in catalog shard order
ST_BUDGET = 4 * 1024 * 1024
st_ok = bool(ix.get("search"))
st_rows = []
for d in ix.get("search") or []:
    rows, ok = shard_rows(rep, d)
    st_ok = st_ok and ok and (d["decoded_bytes"] <= ST_BUDGET or len(rows) == 1)
    st_ok = st_ok and d["catalog_shards"] == [rows[0][0], rows[-1][0]]
    st_rows += rows
by_shard = {}
for i, d in enumerate(ix["shards"]):
    if d.get("requests"):
        by_shard[i] = [el for c, _, el in shard_rows(rep, d)[0] if c == 0]
t.ok(st_ok and [row[0] for row in st_rows] == sorted(by_shard),
     "search-text shards verify, stay within 4 MiB and hold one row per catalog shard with requests, in order")


def fields(el):
    v = [el.get(k) for k in ("id", "session", "agent", "conversation")]
    v += list(el.get("server_ids") or []) + list(el.get("workers") or [])
    return [x.lower() for x in v if isinstance(x, str)]


text_ok = True
for shard, text, us, rs, gs in st_rows:
    els = by_shard[shard]
    seps = {us, rs, gs}
    text_ok = text_ok and len(seps) == 3 and all(len(x) == 1 for x in seps)
    got = []
    for group in text.split(gs):
        parts = group.split(rs)
        shared = parts[0].split(us) if parts[0] else []
        for own in parts[1:]:
            mine = own.split(us) if own else []
            text_ok = text_ok and not set(mine) & set(shared) and len(set(mine)) == len(mine)
            got.append(set(shared) | set(mine))
    text_ok = text_ok and len(got) == len(els)
    for el, have in zip(els, got):
        fs = fields(el)
        text_ok = text_ok and (have == set(fs) or (not fs and have <= {""})) and all(not seps & set(f) for f in fs)
t.ok(text_ok, "each request's search text holds exactly its lowercased fields (shared ones once per group), "
     "with separators none of them holds")
odd = [row for row in st_rows if "straße-äöü|σας~x" in row[1]]
t.ok(len(odd) == 1 and all(c not in "|~" for c in odd[0][2:]),
     "search text is lowercased (final sigma included) and a separator never occurs in it")

# id index
ids = []
lk_ok = True
for d in ix["lookup"]:
    rows, ok = shard_rows(rep, d)
    lk_ok = lk_ok and ok and d["decoded_bytes"] <= BUDGET and rows and rows[0][0] == d["first"]
    ids += rows
want = sorted([(r_["id"], 0) for r_ in doc["requests"]] + [(s["id"], 1) for s in doc["sessions"]])
t.ok(lk_ok, "lookup shards verify, stay within 512 KiB and start with their `first` id")
t.ok([(a, b) for a, b, _ in ids] == want, "the id index lists every request and session id in code point order")
t.ok(all(where[(k, i)] == s for i, k, s in ids), "the id index maps each id to its catalog shard")

# top lists
fields = ix["top_fields"]
for key, lst in (("ttft_ms", ix["top_ttft"]), ("duration", ix["top_duration"])):
    q = tap.run([DSIGHT, "query", rep, "requests", "--sort", "-" + key, "--limit", "1000"])
    cli = [x["id"] for x in json.loads(q.stdout)["items"]]
    t.ok(len(lst) == 1000 and [row[fields.index("id")] for row in lst] == cli,
         "top 1,000 by %s equals `requests --sort -%s`" % (key, key))
    t.ok(all(row[fields.index("shard")] == where[(0, row[0])] for row in lst), "top %s rows name their shard" % key)

# density
D = doc["meta"]["duration"]
bins = [0] * 512


def b_of(x):
    return min(511, max(0, int(x * 512 // D)))


for r_ in doc["requests"]:
    if r_["start"] <= D and r_["end"] >= 0:
        for k in range(b_of(r_["start"]), b_of(r_["end"]) + 1):
            bins[k] += 1
t.eq(ix["density"], bins, "the request density counts the requests touching each bin")

man = json.load(open(os.path.join(rep, "manifest.json")))
t.ok(all(d["url"] in man["files"] for d in ix["shards"] + ix["lookup"] + ix["search"]),
     "the manifest lists every catalog, lookup and search-text shard")

# small and single-file reports keep the collections embedded
small = os.path.join(t.tmp, "small.json")
tap.run([GEN, "--preset", "small", "--requests", "50", "-o", small])
rs = os.path.join(t.tmp, "small-report")
t.ok(tap.run([DSIGHT, "build", small, "-o", rs]).returncode == 0, "build of a small capture")
cs, _, cl = core_of(rs)
t.ok("catalog_shards" not in cs and cl is None and len(cs["requests"]) == 50, "a small catalog stays embedded")
sf = os.path.join(t.tmp, "single")
r = tap.run([DSIGHT, "build", ev_path, "-o", sf, "--single-file", "--max-part-size-mb", "0"])
t.ok(r.returncode == 0, "build --single-file", r.stderr)
c1, _, l1 = core_of(sf)
t.ok("catalog_shards" not in c1 and l1 is None and len(c1["requests"]) == N, "a single-file page keeps the collections embedded")

t.done()

#!/usr/bin/env python3
"""t0451-web-report: the browser half of `dsight build` on the example fixture.

index.html carries the gzip+base64 core catalog (descriptors, density,
delivery); every descriptor matches its detail/<sha>.json.gz file (name =
SHA-256 of the bytes, zero gzip mtime, sizes, count, bounds, decoded hash);
the shard rows equal the SQLite cache's rows in the same text; the density
follows the 512-bin rule, also when meta comes after profiles; identical
evidence gives identical shard names and pages; the manifest lists the
shards; --single-file embeds every shard and writes no detail/.
"""
import base64
import gzip
import hashlib
import json
import math
import os
import re
import sqlite3
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")
CATALOG_RE = re.compile(
    r'<script type="application/octet-stream" id="dsight-catalog">([A-Za-z0-9+/=]*)</script>')
SHARD_RE = re.compile(
    r'<script type="application/octet-stream" id="dsight-shard-([0-9a-f]{64})">([A-Za-z0-9+/=]*)</script>')


def build(src, out, *extra):
    r = tap.run([DSIGHT, "build", src, "-o", out] + list(extra))
    t.ok(r.returncode == 0, "build %s %s" % (os.path.basename(out), " ".join(extra)),
         r.stderr)
    return r


def core_of(page):
    m = CATALOG_RE.search(page)
    if not m:
        return None
    return json.loads(gzip.decompress(base64.b64decode(m.group(1))))


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def density(events, duration):
    bins = [0] * 512
    for s, e in events:
        if s <= duration and e >= 0:
            a = min(max(math.floor(s * 512 / duration), 0), 511)
            b = min(max(math.floor(e * 512 / duration), 0), 511)
            for i in range(a, b + 1):
                bins[i] += 1
    return bins


def check_descriptor(rep, d, kind):
    """Checks one descriptor against its file; returns the decoded rows."""
    path = os.path.join(rep, d["url"])
    raw = open(path, "rb").read()
    dec = gzip.decompress(raw)
    rows = json.loads(dec)
    if isinstance(kind, float):  # summary level rows: bins of that width
        times = [(r[0] * kind, (r[0] + 1) * kind) for r in rows]
    elif isinstance(kind, tuple):  # metric summary rows: [series, bin, ...]
        times = [(r[1] * kind[1], (r[1] + 1) * kind[1]) for r in rows]
    elif kind == "names":
        times = [(0, doc["meta"]["duration"])]
    else:
        times = [(r[0], r[1]) if kind == "events" else (r[0], r[0]) for r in rows]
    ok = (d["url"] == "detail/%s.json.gz" % d["sha256"]
          and hashlib.sha256(raw).hexdigest() == d["sha256"]
          and hashlib.sha256(dec).hexdigest() == d["decoded_sha256"]
          and d["bytes"] == len(raw) and d["decoded_bytes"] == len(dec)
          and d["count"] == len(rows) and raw[:2] == b"\x1f\x8b"
          and raw[4:8] == b"\0\0\0\0"
          and d["bounds"] == [min(s for s, _ in times), min(e for _, e in times),
                              max(s for s, _ in times), max(e for _, e in times)]
          and list(d) == ["url", "sha256", "decoded_sha256", "bytes",
                          "decoded_bytes", "count", "bounds"])
    return ok, rows


rep = os.path.join(t.tmp, "rep")
build(tap.FIXTURE, rep)
page = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
core = core_of(page)
t.ok(core is not None, "index.html holds the dsight-catalog element")
doc = json.load(open(tap.FIXTURE))
t.eq(core and core.get("delivery"),
     {"version": 1, "kind": "static", "cache_bytes": 33554432}, "delivery")
t.ok("<!--dsight:" not in page and not re.search(
    r'<link\b|\bsrc\s*=\s*["\']?(https?:)?//|@import|url\(\s*["\']?(https?:)?//', page),
    "index.html is self-contained (markers replaced, no external reference)")

db = sqlite3.connect("file:%s?mode=ro" % os.path.join(rep, "trace-data.sqlite"), uri=True)
all_ok, files = True, set()
for p, prof in enumerate(core["profiles"]):
    got = []
    for d in prof["event_chunks"]:
        ok, rows = check_descriptor(rep, d, "events")
        all_ok &= ok
        got += rows
        files.add(d["url"])
    want = [[s, e, n, tid, row] for s, e, n, tid, row in db.execute(
        "SELECT start, end, name, tid, source_row FROM events WHERE profile = ? "
        "ORDER BY ordinal", (p,))]
    t.eq(compact(got), compact(want), "profile %d: event shards = cache rows" % p)
    evs = [(r[0], r[1]) for r in got]
    t.eq(prof["event_density"], density(evs, doc["meta"]["duration"]),
         "profile %d: event_density follows the 512-bin rule" % p)
    cpu = prof.get("cpu")
    if isinstance(cpu, dict):
        got = []
        for d in cpu["chunks"]:
            ok, rows = check_descriptor(rep, d, "samples")
            all_ok &= ok
            got += rows
            files.add(d["url"])
        want = [json.loads(x) for (x,) in db.execute(
            "SELECT payload FROM samples WHERE profile = ? ORDER BY ordinal", (p,))]
        t.eq(compact(got), compact(want), "profile %d: CPU sample shards = cache rows" % p)
for s, series in enumerate(core["metrics"]):
    got = []
    for d in series["chunks"]:
        ok, rows = check_descriptor(rep, d, "points")
        all_ok &= ok
        got += rows
        files.add(d["url"])
    want = ",".join(x for (x,) in db.execute(
        "SELECT payload FROM points WHERE series = ? ORDER BY ordinal", (s,)))
    if compact(got)[1:-1] != want:
        t.ok(False, "series %d: point shards = cache payload text" % s,
             "%s\n%s" % (compact(got), want))
        all_ok = False


def summary_bins(events, duration, nb):
    """The lane summary rule (doc/report-files.md "NVTX summary shards", its lane summaries), lanes
    = threads: per (bin, thread, depth, name) count, inner and total over
    the ranges touching the bin, depth 8 holding every deeper range; names
    ranked by total, count, index."""
    w = duration / nb
    acc, threads = {}, []
    for s, e, n, tid, depth in events:
        if not (e >= 0) or not (s <= duration):
            continue
        if tid not in threads:
            threads.append(tid)
        th, dp = threads.index(tid), min(depth, 8)
        s, e = max(s, 0.0), min(e, duration)
        for i in range(min(nb - 1, math.floor(s / w)), min(nb - 1, math.floor(e / w)) + 1):
            lo, hi = i * w, duration if i == nb - 1 else (i + 1) * w
            ov = max(0.0, min(e, hi) - max(s, lo))
            a = acc.setdefault((i, th, dp, n), [0.0, 0.0, 0])
            a[1] += ov
            if not (s <= lo and e >= hi):
                a[0] += ov
            a[2] += 1
    us = lambda x: math.floor(x * 1e6 + 0.5) / 1e6
    rows = {}
    for (i, th, dp, n), (inner, total, count) in acc.items():
        rows.setdefault((i, th, dp), []).append((-total, -count, n, inner))
    out = []
    for (i, th, dp) in sorted(rows):
        top = sorted(rows[(i, th, dp)])
        r = [i, th, dp, len(top)]
        for total, count, n, inner in top[:4]:
            r += [n, us(inner), us(-total), -count]
        out.append(r)
    return threads, out


summarised = 0
for p, prof in enumerate(core["profiles"]):
    ns = prof.get("nvtx_summary")
    if not ns:
        continue
    t.eq((ns.get("version"), ns.get("top"), ns.get("deeper")), (2, 4, 8),
         "profile %d: nvtx_summary version 2, top 4, deeper 8" % p)
    evs = list(db.execute("SELECT e.start, e.end, e.name, e.tid, coalesce(d.depth, 0) "
                          "FROM events e LEFT JOIN dsight_view_depth d ON d.profile = "
                          "e.profile AND d.ordinal = e.ordinal WHERE e.profile = ? "
                          "ORDER BY e.ordinal", (p,)))
    for lv in ns.get("levels", []):
        got = []
        for d in lv["chunks"]:
            ok, rows = check_descriptor(rep, d, lv["width"])
            all_ok &= ok
            got += rows
            files.add(d["url"])
        threads, want = summary_bins(evs, doc["meta"]["duration"], lv["bins"])
        t.eq(ns["threads"], threads, "profile %d: summary threads in order of first range" % p)
        t.eq(got, want, "profile %d: summary level of %d bins follows the rule" % (p, lv["bins"]))
        summarised += 1
    got = []
    for d in ns.get("names", []):
        ok, rows = check_descriptor(rep, d, "names")
        all_ok &= ok
        got += rows
        files.add(d["url"])
    want = [[n, c, m, list(struct.unpack("<%dd" % (len(dp) // 8), dp)),
             list(struct.unpack("<%dd" % (len(cp) // 8), cp))]
            for n, c, m, dp, cp in db.execute(
                "SELECT name, count, duration_max, duration_parts, clipped_parts "
                "FROM dsight_summary_names WHERE profile = ? ORDER BY name", (p,))]
    t.eq(got, want, "profile %d: summary names = dsight_summary_names (exact parts)" % p)
t.ok(summarised > 0, "the fixture's profiles have NVTX summary levels (%d)" % summarised)
stacked = 0
for p, prof in enumerate(core["profiles"]):
    sums = (prof.get("cpu") or {}).get("stack_sums")
    if not sums:
        continue
    got = []
    for d in sums:
        ok, rows = check_descriptor(rep, d, "names")
        all_ok &= ok
        got += rows
        files.add(d["url"])
    want = [list(r) for r in db.execute("SELECT stack, samples FROM dsight_summary_stacks "
                                        "WHERE profile = ? ORDER BY stack", (p,))]
    t.eq(got, want, "profile %d: cpu.stack_sums = dsight_summary_stacks" % p)
    stacked += 1
t.ok(stacked > 0, "profiles with CPU samples have cpu.stack_sums (%d)" % stacked)

# Metric summaries: 512 bins per series (not settings), rows by family name.
ms, D = core.get("metric_summary"), doc["meta"]["duration"]
got = []
for d in (ms or {}).get("chunks", []):
    ok, rows = check_descriptor(rep, d, ("series bins", ms["width"]))
    all_ok &= ok
    files.add(d["url"])
    got += rows
order = sorted((s["name"], i) for i, s in enumerate(core["metrics"])
               if s.get("temporal") != "setting")


def binned(i, nbins):
    """Series i's points binned as the build does: {bin: row tail}."""
    bins = {}
    for (payload,) in db.execute("SELECT payload FROM points WHERE series = ? ORDER BY ordinal", (i,)):
        tm, v = json.loads(payload)[:2]
        if not (0 <= tm <= D):
            continue
        b = bins.setdefault(min(nbins - 1, math.floor(tm * nbins / D)), [0, 0, None, None, 0.0, None])
        b[0] += 1
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            v = float(v)
            b[1] += 1
            b[2] = v if b[2] is None else min(b[2], v)
            b[3] = v if b[3] is None else max(b[3], v)
            b[4] += v
            b[5] = v
    return {k: [n, c] + ([lo, hi, sm / c, last] if c else [])
            for k, (n, c, lo, hi, sm, last) in bins.items()}


want = []
for _, i in order:
    want += [[i, k] + r for k, r in sorted(binned(i, 512).items())]
t.ok(ms is not None and ms["bins"] == 512 and ms["width"] == D / 512, "core catalog: metric_summary (512 bins)")
t.eq(got, want, "metric summary rows = the cache's points binned, in family order")
spans = {i: s.get("summary_chunks") for i, s in enumerate(core["metrics"])}
first = 0
ok = True
for k, d in enumerate((ms or {}).get("chunks", [])):
    ids = {r[0] for r in got[first:first + d["count"]]}
    ok &= all(spans[i] and spans[i][0] <= k <= spans[i][1] for i in ids)
    first += d["count"]
t.ok(ok and all(spans[i] is None for i, s in enumerate(core["metrics"]) if s.get("temporal") == "setting"),
     "each series' summary_chunks span the shards that hold its rows; settings have none")
# The fine level: 8192 bins, one group of consecutive series of one family,
# rows by bin then series, so a window reads the shards its bounds overlap.
fine = (ms or {}).get("fine") or {}
t.ok(fine.get("bins") == 8192 and fine.get("width") == D / 8192 and fine.get("groups"),
     "core catalog: metric_summary.fine (8192 bins, groups)")
groups = {}
for _, i in order:
    groups.setdefault(core["metrics"][i].get("fine_group"), []).append(i)
t.ok(None not in groups and sorted(groups) == list(range(len(fine.get("groups", []))))
     and all(len({core["metrics"][i]["name"] for i in ids}) == 1 for ids in groups.values()),
     "every summarised series has a fine group; a group is one family's series")
fine_ok = True
for g, descs in enumerate(fine.get("groups", [])):
    rows = []
    for d in descs:
        ok, rs = check_descriptor(rep, d, ("series bins", fine["width"]))
        fine_ok &= ok
        files.add(d["url"])
        rows += rs
    exp = sorted(([i, k] + r for i in groups.get(g, []) for k, r in binned(i, 8192).items()),
                 key=lambda r: (r[1], r[0]))
    fine_ok &= rows == exp
t.ok(fine_ok and fine.get("groups"), "fine rows = each group's points binned, by bin then series")
db.close()
t.ok(all_ok and files, "every descriptor matches its file (names, hashes, sizes, "
     "count, bounds, zero mtime) and point rows keep the cache's text")
t.eq(sorted("detail/" + f for f in os.listdir(os.path.join(rep, "detail"))),
     sorted(files), "detail/ holds exactly the described shards")
man = json.load(open(os.path.join(rep, "manifest.json")))
t.ok(set(files) <= set(man["files"]) and "index.html" in man["files"],
     "manifest lists index.html and every shard")
t.eq(man.get("html_sha256"),
     hashlib.sha256(open(os.path.join(rep, "index.html"), "rb").read()).hexdigest(),
     "manifest html_sha256")

# Determinism: same evidence, same shard names and the same page.
rep2 = os.path.join(t.tmp, "rep2")
build(tap.FIXTURE, rep2)
t.eq(sorted(os.listdir(os.path.join(rep2, "detail"))),
     sorted(os.listdir(os.path.join(rep, "detail"))), "rebuild gives the same shard names")
t.eq(open(os.path.join(rep2, "index.html"), "rb").read(),
     open(os.path.join(rep, "index.html"), "rb").read(), "rebuild gives the same index.html")

# meta after profiles: density is still computed (from the staged store).
late = {k: v for k, v in doc.items() if k != "meta"}
late["meta"] = doc["meta"]
late_path = os.path.join(t.tmp, "late.json")
json.dump(late, open(late_path, "w"))
rep3 = os.path.join(t.tmp, "rep3")
build(late_path, rep3)
core3 = core_of(open(os.path.join(rep3, "index.html"), encoding="utf-8").read())
t.eq([p["event_density"] for p in core3["profiles"]],
     [p["event_density"] for p in core["profiles"]],
     "meta after profiles: same density")

# A foreign file inside detail/ makes the build refuse to replace the report.
open(os.path.join(rep2, "detail", "foreign.json.gz"), "wb").write(b"x")
r = tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep2])
t.ok(r.returncode != 0 and "foreign.json.gz" in r.stderr and
     os.path.exists(os.path.join(rep2, "detail", "foreign.json.gz")),
     "a foreign file in detail/ is refused", r.stderr)

# --single-file: everything embedded, no detail/.
single = os.path.join(t.tmp, "single")
build(tap.FIXTURE, single, "--single-file")
t.eq(sorted(os.listdir(single)), ["index.html", "manifest.json", "trace-data.json.gz"],
     "single-file report files")
spage = open(os.path.join(single, "index.html"), encoding="utf-8").read()
score = core_of(spage)
t.eq(score["delivery"]["kind"], "embedded", "single-file delivery kind")
embedded = {sha: base64.b64decode(b) for sha, b in SHARD_RE.findall(spage)}
want = {f[len("detail/"):-len(".json.gz")]: open(os.path.join(rep, f), "rb").read()
        for f in files}
t.ok(embedded == want, "single-file page embeds exactly every shard's bytes",
     "%d embedded, %d wanted" % (len(embedded), len(want)))
smf = json.load(open(os.path.join(single, "manifest.json")))
t.eq(smf["files"], ["index.html", "manifest.json", "trace-data.json.gz"],
     "single-file manifest files")

# the page is pure ASCII, the catalog's other characters as JSON escapes
uni = json.load(open(tap.FIXTURE))
uni["meta"]["job"] = "caf\u00e9 \u2192 \U0001F680 run"
src_uni = os.path.join(t.tmp, "uni.json")
with open(src_uni, "w", encoding="utf-8") as f:
    json.dump(uni, f, ensure_ascii=False)
build(src_uni, os.path.join(t.tmp, "rep-uni"))
with open(os.path.join(t.tmp, "rep-uni", "index.html"), "rb") as f:
    raw_uni = f.read()
m_uni = CATALOG_RE.search(raw_uni.decode("ascii", "replace"))
text_uni = gzip.decompress(base64.b64decode(m_uni.group(1))) if m_uni else b""
t.ok(all(b < 128 for b in raw_uni) and all(b < 128 for b in text_uni) and b"\\ud83d\\ude80" in text_uni,
     "index.html and its catalog text are pure ASCII (JSON escapes, a surrogate pair beyond U+FFFF)")
t.eq(json.loads(text_uni)["meta"]["job"] if text_uni else None, uni["meta"]["job"],
     "the escaped catalog reads back the same text")

sys.exit(t.done())

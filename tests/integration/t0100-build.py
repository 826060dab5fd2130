#!/usr/bin/env python3
# tests/run: tsan (threads: also run on the ThreadSanitizer build)
"""t0100-build: `dsight build` end to end on the example fixture (and a
generated capture when gen-capture is built).

Checks the SQLite v1 schema (tables, columns, index names, user_version,
rollback journal), that catalog + rows give back the input document exactly
(values and number kinds, big integers included), buckets and durations,
the generation id, manifest.json, --single-file output, rebuilding from a
legacy single-file report and from gzip, and that reading the database
read-only leaves its mtime and directory unchanged.
"""
import copy
import gzip
import zlib
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")

TABLES = {
    "catalog": ["json", "generation"],
    "events": ["profile", "ordinal", "bucket", "start", "end", "name", "tid",
               "source_row"],
    "durations": ["profile", "bucket", "maximum"],
    "samples": ["profile", "ordinal", "time", "payload"],
    "points": ["series", "ordinal", "time", "payload"],
}
INDEXES = {
    "event_window": ("events", ["profile", "bucket", "start"]),
    "sample_window": ("samples", ["profile", "time"]),
    "point_window": ("points", ["series", "time"]),
}


def same(a, b, path="$"):
    """Deep equality that also requires equal number kinds (int vs float vs
    bool).  Returns None or the first differing path."""
    if type(a) is not type(b):
        return "%s: %r (%s) != %r (%s)" % (path, a, type(a).__name__, b,
                                           type(b).__name__)
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            if set(a.keys()) != set(b.keys()):
                return "%s: keys %s != %s" % (path, sorted(a), sorted(b))
        for k in a:
            d = same(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: length %d != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if isinstance(a, float) and math.copysign(1, a) != math.copysign(1, b):
        return "%s: sign of zero differs" % path
    return None if a == b else "%s: %r != %r" % (path, a, b)


def expected_document(doc):
    """The input as a rebuilt document must look: times in rows are reals."""
    d = copy.deepcopy(doc)
    for p in d.get("profiles", []):
        for ev in p.get("events", []):
            ev[0] = float(ev[0])
            ev[1] = float(ev[1])
        cpu = p.get("cpu")
        if isinstance(cpu, dict):
            for s in cpu.get("samples", []):
                s[0] = float(s[0])
    for s in d.get("metrics", []):
        for pt in s.get("points", []):
            pt[0] = float(pt[0])
    return d


def ro_connect(path):
    return sqlite3.connect("file:%s?mode=ro" % os.path.abspath(path), uri=True)


def reconstruct(db):
    """The whole document from catalog + rows (independent of docwrite)."""
    cat = json.loads(db.execute("SELECT json FROM catalog").fetchone()[0])
    counts = {}
    for i, p in enumerate(cat.get("profiles", [])):
        rows = db.execute(
            "SELECT start, end, name, tid, source_row FROM events"
            " WHERE profile = ? ORDER BY ordinal", (i,)).fetchall()
        counts[("event", i)] = (p.pop("event_count", None), len(rows))
        p["events"] = [list(r) for r in rows]
        cpu = p.get("cpu")
        if isinstance(cpu, dict):
            rows = db.execute("SELECT payload FROM samples WHERE profile = ?"
                              " ORDER BY ordinal", (i,)).fetchall()
            counts[("sample", i)] = (cpu.pop("sample_count", None), len(rows))
            cpu["samples"] = [json.loads(r[0]) for r in rows]
    for i, s in enumerate(cat.get("metrics", [])):
        rows = db.execute("SELECT payload FROM points WHERE series = ?"
                          " ORDER BY ordinal", (i,)).fetchall()
        s["points"] = [json.loads(r[0]) for r in rows]
    return cat, counts


def build(args, name):
    out = os.path.join(t.tmp, name)
    r = tap.run([DSIGHT, "build"] + args + ["-o", out])
    return out, r


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def list_files(root):
    out = []
    for dp, dns, fns in os.walk(root):
        for f in fns:
            out.append(os.path.relpath(os.path.join(dp, f), root))
    return sorted(out)


def check_report(label, src_doc, out, r):
    if not t.ok(r.returncode == 0, "%s: build exits 0" % label, r.stderr):
        return
    lines = r.stdout.splitlines()
    t.eq(len(lines), 1, "%s: one summary line on stdout" % label)
    summary = json.loads(lines[0]) if lines else {}
    t.eq(r.stderr, "", "%s: nothing on stderr when it is not a terminal" % label)
    t.eq(summary.get("output"), os.path.realpath(out), "%s: summary output" % label)
    for k in ("generation", "counts", "bytes", "seconds"):
        t.ok(k in summary, "%s: summary has %s" % (label, k), summary)

    dbp = os.path.join(out, "trace-data.sqlite")
    st0 = os.stat(dbp)
    before = sorted(os.listdir(out))
    db = ro_connect(dbp)

    # schema
    names = {(r_[0], r_[1]) for r_ in db.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND "
        "name NOT LIKE 'dsight\\_%' ESCAPE '\\' AND type != 'view'")}
    t.eq(names, {("table", n) for n in TABLES} | {("index", n) for n in INDEXES},
         "%s: exactly the five tables and three indexes (besides dsight_ tables and views)"
         % label)
    views = {r_[0] for r_ in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
    t.eq(views, {"nvtx", "cpu_samples", "cpu_frames", "cpu_self", "metric_points", "series", "metric_series",
                 "requests",
                 "request_workers", "lifecycle_stages", "server_spans", "profiles", "workers",
                 "sessions", "iterations", "sources", "gpu", "gpu_launches"}, "%s: the sql views" % label)
    ext = {r_[0] for r_ in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'dsight_%'")}
    t.ok({"dsight_meta", "dsight_core", "dsight_requests", "dsight_sessions",
          "dsight_server_spans", "dsight_iterations", "dsight_request_workers"} <= ext,
         "%s: dsight's extension tables" % label, sorted(ext))
    cols = {n: [c[1] for c in db.execute("PRAGMA table_info(%s)" % n)]
            for n in TABLES}
    t.eq(cols, TABLES, "%s: table columns" % label)
    idx = {n: (db.execute("SELECT tbl_name FROM sqlite_master WHERE name=?",
                          (n,)).fetchone()[0],
               [c[2] for c in db.execute("PRAGMA index_info(%s)" % n)])
           for n in INDEXES}
    t.eq(idx, INDEXES, "%s: index names and columns" % label)
    t.eq(db.execute("PRAGMA user_version").fetchone()[0], 1,
         "%s: user_version = 1" % label)
    with open(dbp, "rb") as f:
        hdr = f.read(20)
    t.eq((hdr[18], hdr[19]), (1, 1), "%s: rollback journal (not WAL) in the file header" % label)
    t.eq(db.execute("PRAGMA journal_mode").fetchone()[0], "delete",
         "%s: journal_mode is delete" % label)

    # catalog row and generation
    rows = db.execute("SELECT json, generation FROM catalog").fetchall()
    t.eq(len(rows), 1, "%s: one catalog row" % label)
    gen = rows[0][1]
    t.ok(re.fullmatch(r"[0-9a-f]{32}", gen), "%s: generation is 32 lowercase hex" % label, gen)
    t.eq(summary.get("generation"), gen, "%s: summary names the stored generation" % label)
    cat = json.loads(rows[0][0])
    t.ok("capabilities" in cat, "%s: catalog has capabilities" % label)
    emptied = all(p.get("events") == [] and isinstance(p.get("event_count"), int)
                  for p in cat.get("profiles", []))
    emptied &= all(s.get("points") == [] for s in cat.get("metrics", []))
    emptied &= all(p["cpu"].get("samples") == [] and
                   isinstance(p["cpu"].get("sample_count"), int)
                   for p in cat.get("profiles", []) if isinstance(p.get("cpu"), dict))
    t.ok(emptied, "%s: catalog arrays emptied with event_count/sample_count" % label)
    compact = json.dumps(cat, separators=(",", ":"), ensure_ascii=False)
    t.ok(len(rows[0][0]) <= len(compact) + 16 and "\n" not in rows[0][0],
         "%s: catalog JSON is compact" % label)

    # rows equal the document
    rec, counts = reconstruct(db)
    bad = [k for k, (a, b) in counts.items() if a != b]
    t.eq(bad, [], "%s: event_count/sample_count equal the stored rows" % label)
    want = expected_document(src_doc)
    if "capabilities" not in src_doc:
        rec_caps = rec.pop("capabilities", None)
        t.ok(isinstance(rec_caps, dict), "%s: capabilities computed" % label)
    diff = same(rec, want)
    t.ok(diff is None, "%s: catalog + rows == input (values and number kinds)" % label, diff)

    # ordinals
    ords = db.execute("SELECT profile, min(ordinal), max(ordinal), count(*)"
                      " FROM events GROUP BY profile").fetchall()
    t.ok(all(a == 0 and b == c - 1 for _, a, b, c in ords),
         "%s: event ordinals are zero-based and dense" % label, ords)

    # buckets and durations
    wrong = []
    maxima = {}
    for prof, b, s, e in db.execute("SELECT profile, bucket, start, end FROM events"):
        want_b = math.ceil(math.log2(max(e - s, 1e-9)))
        if b != want_b:
            wrong.append((prof, s, e, b, want_b))
        k = (prof, b)
        maxima[k] = max(maxima.get(k, -math.inf), e - s)
    t.eq(wrong[:5], [], "%s: bucket = ceil(log2(max(end - start, 1e-9)))" % label)
    durs = {(p, b): m for p, b, m in db.execute("SELECT * FROM durations")}
    t.eq(durs, maxima, "%s: durations hold the maximum per (profile, bucket)" % label)
    if label == "fixture":
        zero = db.execute("SELECT bucket FROM events WHERE start = end").fetchall()
        t.ok(zero and all(z[0] == -29 for z in zero), "%s: zero-length event in bucket -29" % label, zero)
        bigs = [pt[1] for s in rec["metrics"] for pt in s["points"]
                if isinstance(pt[1], int) and abs(pt[1]) >= 2 ** 64]
        t.ok(bigs, "%s: integer point values beyond 2^64 kept exactly" % label)
        nulls = db.execute("SELECT count(*) FROM points WHERE payload LIKE '%,null,%'").fetchone()[0]
        t.ok(nulls > 0, "%s: null point values kept in payloads" % label)
    db.close()

    # manifest
    with open(os.path.join(out, "manifest.json")) as f:
        mtext = f.read()
    m = json.loads(mtext)
    t.ok(mtext.startswith("{\n  \"generator\": \"srtctl-trace\""), "%s: manifest pretty-printed" % label)
    t.eq(m.get("generation"), gen, "%s: manifest generation" % label)
    t.eq(m.get("delivery"), "static-details/1", "%s: manifest delivery" % label)
    t.eq(m.get("schema"), src_doc["schema"], "%s: manifest schema" % label)
    t.ok(same(m.get("meta"), src_doc["meta"]) is None, "%s: manifest meta" % label)
    t.ok(same(m.get("sources"), src_doc["sources"]) is None, "%s: manifest sources" % label)
    t.eq(m.get("data_sha256"), sha256(dbp), "%s: data_sha256" % label)
    html = os.path.join(out, "index.html")
    t.eq(m.get("html_sha256", "missing"), sha256(html) if os.path.exists(html) else None,
         "%s: html_sha256 of index.html (null without one)" % label)
    t.eq(m.get("files"), list_files(out), "%s: manifest lists every file, sorted" % label)
    want_counts = {k: len(src_doc.get(k, [])) for k in
                   ("requests", "sessions", "workers", "metrics", "profiles", "iterations")}
    t.eq(m.get("counts"), want_counts, "%s: manifest counts" % label)
    t.eq(summary.get("counts"), want_counts, "%s: summary counts" % label)

    # dsight itself reading the report (every kind, the report and its
    # SQLite file as datasets) leaves the file and the directory as they were
    dir0 = os.stat(out)
    bad = []
    for ds in (out, dbp):
        for kind in ("summary", "requests", "metrics", "nsys", "cpu", "sources", "workers"):
            q = tap.run([DSIGHT, "query", ds, kind])
            if q.returncode != 0:
                bad.append((ds, kind, q.stderr))
    t.eq(bad, [], "%s: dsight query answers every kind from the report and its SQLite file" % label)
    st2, dir2 = os.stat(dbp), os.stat(out)
    t.eq((st2.st_mtime_ns, st2.st_ctime_ns, st2.st_size, dir2.st_mtime_ns),
         (st0.st_mtime_ns, st0.st_ctime_ns, st0.st_size, dir0.st_mtime_ns),
         "%s: dsight query leaves the SQLite file's mtime, ctime, size and the directory unchanged" % label)
    t.eq(sorted(os.listdir(out)), before, "%s: reading creates no side file" % label)
    parent = os.path.dirname(out)
    t.eq([n for n in os.listdir(parent) if ".build-" in n], [],
         "%s: no staging directory left" % label)
    return gen


with open(tap.FIXTURE) as f:
    doc = json.load(f)

out, r = build([tap.FIXTURE], "rep")
gen1 = check_report("fixture", doc, out, r)

# rebuild over the previous report: a new generation, same rows
out, r = build([tap.FIXTURE], "rep")
gen2 = check_report("rebuild", doc, out, r)
t.ok(gen1 and gen2 and gen1 != gen2, "a rebuild gets a fresh generation")

# gzip input (detected by magic, not by name), no capabilities
nocap = copy.deepcopy(doc)
caps = nocap.pop("capabilities")
gz = os.path.join(t.tmp, "nocap.json")
with gzip.open(gz, "wt", encoding="utf-8") as f:
    json.dump(nocap, f, ensure_ascii=False)
out, r = build([gz], "rep-gz")
check_report("gzip-nocap", nocap, out, r)
if r.returncode == 0:
    db = ro_connect(os.path.join(out, "trace-data.sqlite"))
    c = json.loads(db.execute("SELECT json FROM catalog").fetchone()[0])
    db.close()
    t.eq(c.get("capabilities"), caps, "gzip-nocap: computed capabilities match the fixture's")

# --single-file
out, r = build([tap.FIXTURE, "--single-file"], "single")
if t.ok(r.returncode == 0, "single-file: build exits 0", r.stderr):
    files = list_files(out)
    t.ok("trace-data.json.gz" in files and "manifest.json" in files and
         "trace-data.sqlite" not in files, "single-file: document + manifest, no sqlite", files)
    data = os.path.join(out, "trace-data.json.gz")
    with open(data, "rb") as f:
        raw = f.read()
    t.eq(raw[:4], b"\x1f\x8b\x08\x00", "single-file: gzip without a file name")
    t.eq(raw[4:8], b"\0\0\0\0", "single-file: gzip mtime is zero")
    single = json.loads(gzip.decompress(raw).decode("utf-8"))
    diff = same(single, expected_document(doc))
    t.ok(diff is None, "single-file: the document equals the input (kinds too)", diff)
    m = json.load(open(os.path.join(out, "manifest.json")))
    t.eq(m.get("delivery"), "embedded", "single-file: manifest delivery embedded")
    t.eq(m.get("data_sha256"), sha256(data), "single-file: data_sha256 of the document")
    t.eq(m.get("files"), files, "single-file: manifest lists every file")
    # identical content gives identical bytes (zero mtime, deterministic)
    out2, r2 = build([tap.FIXTURE, "--single-file"], "single2")
    t.ok(r2.returncode == 0 and sha256(data) == sha256(os.path.join(out2, "trace-data.json.gz")),
         "single-file: deterministic document bytes")
    # rebuild from the legacy single-file report directory
    out3, r3 = build([out], "from-legacy")
    check_report("legacy-dir", doc, out3, r3)

# a generated capture, when the generator is built
gen_capture = tap.binpath("gen-capture")
if os.path.exists(gen_capture):
    cap = os.path.join(t.tmp, "small.json")
    g = tap.run([gen_capture, "--preset", "small", "--seed", "7", "-o", cap])
    if t.ok(g.returncode == 0, "gen-capture small", g.stderr):
        with open(cap, "rb") as f:
            head = f.read(2)
        opener = gzip.open if head == b"\x1f\x8b" else open
        with opener(cap, "rt", encoding="utf-8") as f:
            gdoc = json.load(f)
        out, r = build([cap], "rep-gen")
        check_report("generated", gdoc, out, r)
    # a document over 1 MiB is written as several whole gzip members: one
    # stream to gzip, Python and dsight's own reader
    big = os.path.join(t.tmp, "scaled.json")
    g = tap.run([gen_capture, "--preset", "small", "--seed", "7", "--scale", "300",
                 "-o", big])
    if t.ok(g.returncode == 0, "gen-capture small --scale 300", g.stderr):
        out, r = build([big, "--single-file"], "single-big")
        data = os.path.join(out, "trace-data.json.gz")
        if t.ok(r.returncode == 0 and os.path.exists(data),
                "single-file of a 1-MiB+ capture builds", r.stderr):
            raw = open(data, "rb").read()
            members, rest = 0, raw
            while rest:
                z = zlib.decompressobj(31)
                z.decompress(rest)
                if not t.ok(z.eof, "gzip member %d is whole" % (members + 1)):
                    break
                members += 1
                rest = z.unused_data
            t.ok(members >= 2, "single-file: the document is %d gzip members" % members)
            with open(big, encoding="utf-8") as f:
                bdoc = json.load(f)
            diff = same(json.loads(gzip.decompress(raw).decode("utf-8")),
                        expected_document(bdoc))
            t.ok(diff is None, "single-file: the multi-member document equals "
                 "the input", diff)
            gz = tap.run(["gzip", "-t", data])
            t.ok(gz.returncode == 0, "gzip -t accepts the document", gz.stderr)
            prog, rp = build([big], "progressive-big")
            qa = tap.run([DSIGHT, "query", out, "nsys", "--limit", "5"])
            qb = tap.run([DSIGHT, "query", prog, "nsys", "--limit", "5"])
            t.ok(qa.returncode == 0 and qa.stdout == qb.stdout,
                 "dsight reads the multi-member document as the cache",
                 (qa.stderr, qa.stdout[:200], qb.stdout[:200]))

# --help
h = tap.run([DSIGHT, "build", "--help"])
t.ok(h.returncode == 0 and "--single-file" in h.stdout and "Examples" in h.stdout,
     "build --help documents the options with examples")

sys.exit(t.done())

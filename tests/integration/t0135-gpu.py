#!/usr/bin/env python3
"""t0135-gpu: GPU activity imported from Nsight exports.

Every expected answer is computed here straight from the export with
sqlite3 (brute force, never from dsight's tables): the GPU rows and their
order, the launch link by correlationId within one process, the NVTX
projection (the latest-stored range open on the launching thread at the
launch call's start), the per-range projected kernels and busy unions on
`nsys` rows, `gpu` pages over random windows and filters, `gpu
--group-by`, the views, the static report's GPU shards and summary; on
a small export and a graph-heavy one; and
exports of older layouts (a missing column, missing tables) import with a
warning naming the export, table and column.
"""
import base64
import bisect
import gzip
import json
import math
import os
import random
import re
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")
GEN = os.path.join(tap.TOP, "scripts", "gen-nsys-export")
TMP = t.tmp
KINDS = ["kernel", "memcpy", "memset"]
TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET"]
COPY = ["UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA",
        "DTOD", "HTOH", "PTOP"]


def gen(name, *args):
    path = os.path.join(TMP, name + ".sqlite")
    r = tap.run([sys.executable, GEN, path] + list(args))
    assert r.returncode == 0, r.stderr
    return path


def build(export, name, env=None):
    out = os.path.join(TMP, name)
    shutil.rmtree(out, ignore_errors=True)
    r = tap.run([DSIGHT, "build", "--nsys-sqlite", export, "-o", out],
                env=env)
    assert r.returncode == 0, r.stderr
    return out, r.stderr


def query(report, *args):
    r = tap.run([DSIGHT, "query", report] + list(args))
    assert r.returncode == 0, (args, r.stderr, r.stdout)
    return json.loads(r.stdout)


def sec(ns):
    return ns / 1e9  # origin = capture start = session start here


def cols(db, table):
    return {r[1] for r in db.execute("PRAGMA table_info(%s)" % table)}


def reference(path):
    """The expected import, from the export alone."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    dur = db.execute("SELECT stopTime - startTime FROM ANALYSIS_DETAILS") \
        .fetchone()[0]
    ranges = [r for r in db.execute(
        "SELECT rowid, start, end, globalTid, text, textId FROM NVTX_EVENTS "
        "WHERE end IS NOT NULL ORDER BY start, end DESC, rowid")
        if r[2] >= r[1] and r[1] >= 0 and r[2] <= dur]
    names, name_of = [], {}
    rng = []
    for k, (rowid, s, e, tid, text, tid_) in enumerate(ranges):
        n = text if text is not None else strings.get(tid_, "")
        if n not in name_of:
            name_of[n] = len(names)
            names.append(n)
        rng.append((s, e, tid, n))
    by_tid = {}
    for k, (s, e, tid, n) in enumerate(rng):
        by_tid.setdefault(tid, []).append(k)
    # launches: first call per (pid, correlationId) in (start, rowid) order
    launch = {}
    for s, tid, corr, nid in db.execute(
            "SELECT start, globalTid, correlationId, nameId FROM "
            "CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start, rowid"):
        if s is None or tid is None or corr is None:
            continue
        key = ((tid >> 24) & 0xFFFFFF, corr)
        if key in launch:
            continue
        # projection: the latest-stored imported range open at s
        nv = None
        for k in reversed(by_tid.get(tid, [])):
            if rng[k][0] <= s <= rng[k][1]:
                nv = k
                break
        nm = strings.get(nid)
        if nm is not None:
            base = nm.rstrip("0123456789")
            if base != nm and base.endswith("_v"):
                nm = base[:-2]
        launch[key] = (tid, s, nm, nv)
    enum = {}
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = "
                  "'ENUM_CUDA_MEMCPY_OPER'").fetchone():
        enum = dict(db.execute("SELECT id, name FROM ENUM_CUDA_MEMCPY_OPER"))
    rows = []
    for kind, table in enumerate(TABLES):
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?",
                          (table,)).fetchone():
            continue
        have = cols(db, table)

        def c(n):
            return n if n in have else "NULL"
        for r in db.execute(
                "SELECT rowid, start, end, %s, %s, %s, %s, %s, %s, %s, %s "
                "FROM %s" % (c("deviceId"), c("streamId"),
                             c("correlationId"), c("globalPid"),
                             c("demangledName") if kind == 0 else "NULL",
                             c("shortName") if kind == 0 else "NULL",
                             c("copyKind") if kind == 1 else "NULL",
                             c("graphNodeId"), table)):
            rowid, s, e, dev, stream, corr, gpid, dn, sn, ck, gn = r
            if s is None or e is None or e < s:
                continue
            if kind == 0:
                name = strings.get(dn, "") if dn is not None else \
                    strings.get(sn, "")
            elif kind == 1:
                k = enum.get(ck) if ck is not None else None
                if k is None and ck is not None and 0 <= ck < len(COPY):
                    k = COPY[ck]
                k = (k or "UNKNOWN").replace("CUDA_MEMCPY_KIND_", "")
                if "TO" in k[1:-1]:
                    i = k.index("TO", 1)
                    k = k[:i] + "to" + k[i + 2:]
                elif k == "UNKNOWN":
                    k = "Unknown"
                name = "Memcpy " + k
            else:
                name = "Memset"
            ln = None
            if gpid is not None and corr is not None:
                ln = launch.get(((gpid >> 24) & 0xFFFFFF, corr))
            rows.append(dict(
                key=(s, e, kind, rowid), kind=KINDS[kind], start=sec(s),
                end=sec(e), device=dev, stream=stream, name=name,
                correlation=corr, graph_node=gn,
                launch_tid=str(ln[0]) if ln else None,
                launch_start=sec(ln[1]) if ln else None,
                launch_name=ln[2] if ln else None,
                nvtx_ordinal=ln[3] if ln else None,
                nvtx_name=rng[ln[3]][3] if ln and ln[3] is not None
                else None,
                launch_ns=(ln[0], ln[1]) if ln else None,
                start_ns=s, end_ns=e, rowid=rowid))
    rows.sort(key=lambda r: r["key"])
    db.close()
    return rows, rng


def overlaps(r, ws, we):
    return r["start"] <= we and r["end"] >= ws


def expected_page(rows, ws, we, flt, sort=None, limit=50):
    sel = [r for r in rows if overlaps(r, ws, we) and flt(r)]
    if sort == "-duration":
        sel.sort(key=lambda r: -(r["end"] - r["start"]))
    elif sort == "queue_delay":
        sel.sort(key=lambda r: (r["launch_start"] is None,
                                r["start"] - r["launch_start"]
                                if r["launch_start"] is not None else 0))
    return len(sel), sel[:limit]


def projected(rows, rng, k):
    """Kernels launched on range k's thread while it was open."""
    s, e, tid, _ = rng[k]
    ks = [r for r in rows if r["kind"] == "kernel" and r["launch_ns"] and
          r["launch_ns"][0] == tid and s <= r["launch_ns"][1] <= e]
    if not ks:
        return None, None, None, 0
    ks.sort(key=lambda r: r["start"])
    busy, cs, ce = 0.0, ks[0]["start"], ks[0]["end"]
    for r in ks[1:]:
        if r["start"] > ce:
            busy += ce - cs
            cs, ce = r["start"], r["end"]
        elif r["end"] > ce:
            ce = r["end"]
    busy += ce - cs
    return (min(r["start"] for r in ks), max(r["end"] for r in ks), busy,
            len(ks))


FIELDS = ["gpu_kind", "start", "end", "device", "stream", "name",
          "correlation", "graph_node", "launch_tid", "launch_start",
          "launch_name", "nvtx_ordinal", "nvtx_name", "rowid"]


def check_shards(label, report, rows):
    """The static report's GPU shards hold every row in order, its GPU
    summary the (device, stream) tracks and the kernels' queue delays."""
    html = open(os.path.join(report, "index.html")).read()
    m = re.search(r'id="dsight-catalog">([^<]*)<', html)
    p = json.loads(gzip.decompress(base64.b64decode(m.group(1))))["profiles"][0]
    names, got = p["gpu_names"], []
    for d in p["gpu_chunks"]:
        with gzip.open(os.path.join(report, d["url"])) as f:
            got += json.load(f)
    want = [(r["start"], r["end"], r["kind"], r["device"], r["stream"],
             r["name"], r["correlation"], r["launch_tid"], r["launch_start"],
             r["launch_name"], r["nvtx_ordinal"], r["rowid"],
             r["graph_node"]) for r in rows]
    have = [(g[0], g[1], KINDS[g[2]], g[3], g[4], names[g[5]], g[6], g[7],
             g[8], None if g[9] is None else names[g[9]], g[10], g[11],
             g[23]) for g in got]
    t.ok(have == want, "%s: the report's GPU shards hold every GPU row in "
         "order with its launch and NVTX link" % label,
         [(a, b) for a, b in zip(have, want) if a != b][:3])
    sm = p["gpu_summary"]
    tracks = sorted({(r["device"], r["stream"]) for r in rows})
    q = [r["start"] - r["launch_start"] for r in rows
         if r["kind"] == "kernel" and r["launch_tid"] is not None]
    t.ok(sorted((x["device"], x["stream"]) for x in sm["tracks"]) == tracks
         and len(sm["levels"]) == 3 and
         sm["queue_delay"] == [min(q), max(q)],
         "%s: gpu_summary: %d device/stream tracks, 3 levels, the kernels' "
         "queue delay bounds" % (label, len(tracks)), sm.get("queue_delay"))


def check_export(label, path, seed):
    rows, rng = reference(path)
    report, _ = build(path, label)
    rnd = random.Random(seed)
    dur = query(report, "summary")["meta"]["duration"]
    t.ok(len(rows) > 0 and query(report, "summary")["capabilities"]["gpu"],
         "%s: capabilities.gpu with %d GPU rows" % (label, len(rows)))
    got = query(report, "gpu", "--limit", "0")["total"]
    t.eq(got, sum(overlaps(r, 0, dur) for r in rows),
         "%s: every GPU row overlapping the run" % label)
    linked = sum(r["launch_tid"] is not None for r in rows)
    proj = sum(r["nvtx_ordinal"] is not None for r in rows)
    pr = query(report, "profiles")["items"][0]["gpu"]
    t.eq((pr["rows"], pr["launch_linked"], pr["nvtx_projected"]),
         (len(rows), linked, proj),
         "%s: profiles says rows, linked and projected" % label)
    check_shards(label, report, rows)
    # pages over random windows and filters
    bad = []
    for i in range(14):
        a, b = sorted(rnd.uniform(0, dur) for _ in range(2))
        args, flt = [], (lambda r: True)
        pick = i % 7
        if pick == 1:
            args, flt = ["--gpu-kind", "memcpy"], \
                (lambda r: r["kind"] == "memcpy")
        elif pick == 2:
            args, flt = ["--device", "1"], (lambda r: r["device"] == 1)
        elif pick == 3:
            args, flt = ["--stream", "13", "--device", "0"], \
                (lambda r: r["stream"] == 13 and r["device"] == 0)
        elif pick == 4:
            args, flt = ["--name", "GEMM"], \
                (lambda r: "gemm" in r["name"].lower())
        sort = {5: "-duration", 6: "queue_delay"}.get(pick)
        if sort:
            args += ["--sort", sort]
        total, exp = expected_page(rows, a, b, flt, sort)
        ans = query(report, "gpu", "--from", repr(a), "--to", repr(b),
                    "--limit", "50", "--fields", ",".join(FIELDS), *args)
        want = [{k: (r["kind"] if k == "gpu_kind" else r[k])
                 for k in FIELDS} for r in exp]
        if ans["total"] != total or (not sort and ans["items"] != want) or \
                (sort and [x["rowid"] for x in ans["items"]] !=
                 [r["rowid"] for r in exp]):
            bad.append((a, b, args, ans["total"], total))
    t.eq(bad, [], "%s: gpu pages equal the brute-force reference" % label)
    # every grouping, whole run (from the build-time key summary) and a
    # window (a scan), with and without a device, kind or name filter
    devices = sorted({r["device"] for r in rows if r["device"] is not None})
    names = sorted({r["name"] for r in rows if r["name"]})
    cases = [(field, win, flt) for field in ("name", "nvtx", "device",
                                             "stream", "gpu_kind")
             for win in ((0.0, dur), (dur / 4, dur / 2)) for flt in ((),)]
    cases += [(field, (0.0, dur), flt) for field in ("nvtx", "stream", "name")
              for flt in (("--device", str(devices[-1])),
                          ("--gpu-kind", "kernel"),
                          ("--name", re.findall(r"[A-Za-z]{4,}",
                                                 names[len(names) // 2])[-1]
                           .upper()))]
    for field, (a, b), flt in cases:
        groups = {}
        for r in rows:
            if not overlaps(r, a, b):
                continue
            if flt and flt[0] == "--device" and r["device"] != int(flt[1]):
                continue
            if flt and flt[0] == "--gpu-kind" and r["kind"] != flt[1]:
                continue
            if flt and flt[0] == "--name" and \
                    flt[1].lower() not in (r["name"] or "").lower():
                continue
            key = {"name": r["name"], "nvtx": r["nvtx_name"],
                   "device": r["device"], "stream": r["stream"],
                   "gpu_kind": r["kind"]}[field]
            groups.setdefault(key, []).append(r)
        exp = []
        for key, rs in groups.items():
            exp.append({"key": key, "count": len(rs),
                        "duration_total": math.fsum(
                            r["end"] - r["start"] for r in rs),
                        "duration_max": max(r["end"] - r["start"]
                                            for r in rs),
                        "clipped_total": math.fsum(
                            min(r["end"], b) - max(r["start"], a)
                            for r in rs)})
        exp.sort(key=lambda g: (-g["clipped_total"], -g["count"],
                                (g["key"] is None, str(g["key"]))
                                if not isinstance(g["key"], int)
                                else (False, g["key"])))
        ans = query(report, "gpu", "--group-by", field, "--from", repr(a),
                    "--to", repr(b), "--limit", "1000", *flt)
        got = [{k: g[k] for k in ("key", "count", "duration_total",
                                  "duration_max", "clipped_total")}
               for g in ans["items"]]
        t.eq(got, exp, "%s: gpu --group-by %s %s %s equals the reference"
             % (label, field, "whole run" if b == dur else "window",
                " ".join(flt)))
    # projection onto nsys rows: every range with kernels, plus some without
    ks = [k for k in range(len(rng)) if projected(rows, rng, k)[3]]
    sample = ks[:40] + rnd.sample(range(len(rng)), min(20, len(rng)))
    bad = []
    nsys = query(report, "nsys", "--limit", "1000", "--fields",
                 "rowid,start,end,gpu_start,gpu_end,gpu_busy,kernels")
    allr = query(report, "sql", "--sql", "SELECT ordinal FROM nvtx ORDER BY "
                 "start, profile, source_row", "--max-rows", "1000000")
    ords = [x[0] if isinstance(x, list) else x["ordinal"]
            for x in allr["rows"]]
    by_ord = {}
    for pos, o in enumerate(ords[:len(nsys["items"])]):
        by_ord[o] = nsys["items"][pos]
    for k in sample:
        if k not in by_ord:
            continue
        item = by_ord[k]
        gs, ge, busy, n = projected(rows, rng, k)
        if (item["gpu_start"], item["gpu_end"], item["gpu_busy"],
                item["kernels"]) != (gs, ge, busy, n):
            bad.append((k, item, (gs, ge, busy, n)))
    t.eq(bad, [], "%s: nsys gpu_start/gpu_end/gpu_busy/kernels (%d ranges "
         "with kernels)" % (label, len(ks)))
    # the views
    v = query(report, "sql", "--sql", "SELECT count(*), sum(kind = 'kernel'),"
              " count(launch_tid), count(nvtx_ordinal) FROM gpu")
    row = v["rows"][0]
    row = list(row.values()) if isinstance(row, dict) else row
    t.eq(row, [len(rows), sum(r["kind"] == "kernel" for r in rows), linked,
               proj], "%s: the gpu view" % label)
    # its dictionary columns, row by row (read through scalar subqueries)
    r_ = tap.run([DSIGHT, "query", report, "sql", "--sql",
                  "SELECT g.start, g.\"end\", g.name, g.device, g.stream,"
                  " g.kind, g.nvtx_name, g.worker IS (SELECT worker FROM"
                  " profiles AS p WHERE p.id = g.profile) FROM gpu AS g",
                  "--max-rows", "1000000", "--format", "jsonl"])
    got = sorted((tuple(json.loads(x)) for x in
                  r_.stdout.splitlines()[1:-1]), key=repr)
    want = sorted(((r["start"], r["end"], r["name"], r["device"],
                    r["stream"], r["kind"], r["nvtx_name"], 1)
                   for r in rows), key=repr)
    t.ok(r_.returncode == 0 and got == want, "%s: the gpu view's names, "
         "workers and projected ranges equal the reference" % label,
         (r_.stderr[-200:], got[:2], want[:2]))
    launches = {(r["launch_tid"], r["launch_start"], r["correlation"])
                for r in rows if r["launch_tid"]}
    v = query(report, "sql", "--sql", "SELECT count(*), max(gpu_rows) FROM "
              "gpu_launches")
    row = v["rows"][0]
    row = list(row.values()) if isinstance(row, dict) else row
    t.eq(row[0], len(launches), "%s: gpu_launches, one per launch (largest "
         "%s GPU rows)" % (label, row[1]))
    # its groups stream in the launch index's order: a LIMIT reads a few
    # launches, not every GPU row into a sort first (10 M rows: 3 ms, not
    # past the time limit)
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(report, "trace-data.sqlite"),
                         uri=True)
    plan = " | ".join(r[3] for r in db.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM gpu_launches LIMIT 3"))
    db.close()
    t.ok("TEMP B-TREE" not in plan and "dsight_gpu_launch" in plan,
         "%s: gpu_launches groups in index order, no sort" % label, plan)
    # timeline --of gpu: kernels overlapping and busy union per device
    bad = []
    for i in range(4):
        a, b = sorted(rnd.uniform(0, dur) for _ in range(2))
        if i == 0:
            a, b = 0.0, dur
        width = (b - a) / rnd.choice([1, 3, 7, 20]) * 1.0000001
        ans = query(report, "timeline", "--of", "gpu", "--bucket",
                    repr(width), "--from", repr(a), "--to", repr(b))
        exp = timeline_ref(rows, a, b, width, ans["buckets"])
        got = {(s_["key"]["profile"], s_["key"]["device"]):
               (s_["values"]["kernels"], s_["values"]["busy"])
               for s_ in ans["series"]}
        if got != exp:
            bad.append((a, b, width))
    t.eq(bad, [], "%s: timeline --of gpu equals the reference" % label)
    return rows


def edges(a, b, w):
    n = 1
    while a + n * w < b:
        n += 1
    starts = [a + i * w for i in range(n)]
    return starts, starts[1:] + [b]


def timeline_ref(rows, a, b, w, buckets):
    starts, ends = edges(a, b, w)
    assert starts == buckets, (starts[:3], buckets[:3])
    out = {}
    for dev in sorted({r["device"] for r in rows}):
        ks = [r for r in rows if r["kind"] == "kernel" and
              r["device"] == dev and overlaps(r, a, b)]
        count = [0] * len(starts)
        pieces = [[] for _ in starts]
        for r in ks:
            for j in range(len(starts)):
                if r["start"] <= ends[j] and r["end"] >= starts[j]:
                    count[j] += 1
        ks.sort(key=lambda r: r["key"])
        merged = []
        for r in ks:
            if merged and r["start"] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], r["end"])
            else:
                merged.append([r["start"], r["end"]])
        for cs, ce in merged:
            for j in range(len(starts)):
                if cs <= ends[j] and ce >= starts[j]:
                    pieces[j].append(min(ce, ends[j]) - max(cs, starts[j]))
        out[(0, dev)] = (count, [math.fsum(p) for p in pieces])
    return out


small = gen("small", "--ranges", "1500", "--kernels", "2500",
            "--duration-s", "6", "--threads", "3")
# rows across the run's bounds: before 0, across the end, after it, and
# one starting exactly at 0 and ending after the end (both boundary
# scans of the whole-run summary see it: it must count once)
db = sqlite3.connect(small)
for s, e in ((-2_000_000, 1_000_000), (-5_000_000, -1_000_000),
             (5_999_000_000, 6_400_000_000), (6_100_000_000, 6_200_000_000),
             (0, 6_300_000_000)):
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT ?, ?, "
               "deviceId, contextId, greenContextId, streamId, NULL, "
               "globalPid, demangledName, shortName, mangledName, launchType, "
               "cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, "
               "blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
               "localMemoryPerThread, localMemoryTotal, gridId, "
               "sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig "
               "FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 5", (s, e))
db.commit()
db.close()
check_export("small", small, 1)
rep = os.path.join(TMP, "small")
for args in (["gpu", "--group-by", "name"],
             ["gpu", "--group-by", "nvtx"], ["gpu", "--group-by", "device"],
             ["gpu", "--group-by", "stream", "--gpu-kind", "kernel"],
             ["gpu", "--group-by", "gpu_kind", "--name", "gemm"],
             ["timeline", "--of", "gpu", "--bucket", "1"]):
    a_ = tap.run([DSIGHT, "query", rep] + args)
    b_ = tap.run([DSIGHT, "query", rep] + args,
                 env=dict(os.environ, DSIGHT_NO_SUMMARIES="1"))
    t.ok(a_.returncode == 0 and a_.stdout == b_.stdout,
         "whole-run %s: the same bytes with and without summaries"
         % " ".join(args))
graph = gen("graph", "--ranges", "800", "--kernels", "4000", "--graph-size",
            "64", "--duration-s", "4", "--devices", "3", "--streams", "2")
rows = check_export("graph-heavy", graph, 2)
by_corr = {}
for r in rows:
    if r["launch_name"] == "cudaGraphLaunch":
        by_corr.setdefault((r["launch_tid"], r["correlation"]), 0)
        by_corr[(r["launch_tid"], r["correlation"])] += 1
t.ok(by_corr and max(by_corr.values()) >= 48,
     "graph-heavy: one cudaGraphLaunch launches up to %d kernels"
     % max(by_corr.values() or [0]))

# An export stored out of order, with awkward links: the kernels in random
# rowid order (too many runs to merge: SQLite sorts them), duplicated and
# late runtime calls, kernels whose call is filed after they start or is
# missing, rows ending before they start; built with a launch window of 5 calls, so
# the window drops calls and the exact lookup answers for them.
mixed = gen("mixed", "--ranges", "600", "--kernels", "1500", "--duration-s",
            "4", "--threads", "3", "--graph-size", "8")
db = sqlite3.connect(mixed)
K = "CUPTI_ACTIVITY_KIND_KERNEL"
R = "CUPTI_ACTIVITY_KIND_RUNTIME"
db.execute("CREATE TABLE k2 AS SELECT * FROM %s ORDER BY "
           "(rowid * 7919) %% 1009" % K)
db.execute("DELETE FROM %s" % K)
db.execute("INSERT INTO %s SELECT * FROM k2" % K)
db.execute("DROP TABLE k2")
db.execute("INSERT INTO %s SELECT start + 5, end, eventClass, globalTid + 1,"
           " correlationId, nameId, returnValue, NULL FROM %s WHERE rowid %% 9 = 2"
           % (R, R))
db.execute("INSERT INTO %s SELECT start - 5, end, eventClass, globalTid + 2,"
           " correlationId, nameId, returnValue, NULL FROM %s WHERE rowid %% 13 = 4"
           " AND globalTid %% 4 = 0" % (R, R))
db.execute("UPDATE %s SET start = start + 90000000 WHERE rowid %% 17 = 3" % R)
db.execute("UPDATE %s SET correlationId = 777777777 WHERE rowid %% 23 = 5"
           % K)
db.execute("UPDATE %s SET end = start - 1 WHERE rowid %% 101 = 7" % K)
db.commit()
db.close()
rows, _ = reference(mixed)
report, _ = build(mixed, "mixed", dict(os.environ,
                                       DSIGHT_TEST_LAUNCH_WINDOW="5"))
dur = query(report, "summary")["meta"]["duration"]
want = [{k: (r["kind"] if k == "gpu_kind" else r[k]) for k in FIELDS}
        for r in rows if overlaps(r, 0, dur)]
got = []
while len(got) < len(want):
    page = query(report, "gpu", "--limit", "1000", "--offset", str(len(got)),
                 "--fields", ",".join(FIELDS))["items"]
    if not page:
        break
    got += page
t.ok(len(want) > 1000 and got == want,
     "out of order, odd links, a window of 5 calls: every GPU row and its "
     "link equal the reference (%d rows)" % len(want))

# older layouts: a missing column, missing tables
old = gen("old", "--ranges", "300", "--kernels", "400", "--omit-column",
          "CUPTI_ACTIVITY_KIND_KERNEL.graphNodeId", "--omit-column",
          "CUPTI_ACTIVITY_KIND_MEMCPY.copyKind", "--omit-table",
          "CUPTI_ACTIVITY_KIND_MEMSET", "--omit-table",
          "ENUM_CUDA_MEMCPY_OPER")
rows, _ = reference(old)
report, err = build(old, "old")
t.ok("old.sqlite: CUPTI_ACTIVITY_KIND_KERNEL has no column graphNodeId"
     in err and "old.sqlite: CUPTI_ACTIVITY_KIND_MEMCPY has no column "
     "copyKind" in err, "older layout: warnings name export, table, column")
ans = query(report, "gpu", "--group-by", "name", "--limit", "1000")
t.eq(query(report, "profiles")["items"][0]["gpu"]["rows"], len(rows),
     "older layout: the rest imported")
t.ok(any(g["key"] == "Memcpy Unknown" for g in ans["items"]) and
     not any(g["key"] == "Memset" for g in ans["items"]),
     "older layout: copies without copyKind, no memsets")
norun = gen("noruntime", "--ranges", "200", "--kernels", "300",
            "--omit-table", "CUPTI_ACTIVITY_KIND_RUNTIME")
report, _ = build(norun, "noruntime")
ans = query(report, "gpu", "--limit", "1", "--fields", "launch_name,"
            "nvtx_ordinal,queue_delay")
t.eq((ans["total"], ans["items"][0]),
     (300, {"launch_name": None, "nvtx_ordinal": None, "queue_delay": None}),
     "without runtime calls: rows kept, launch fields null")

# without GPU rows nothing changes: no gpu key, no GPU columns on nsys
plain = gen("plain", "--ranges", "200")
report, _ = build(plain, "plain")
item = query(report, "nsys", "--limit", "1")["items"][0]
t.ok("kernels" not in item and "gpu" not in
     query(report, "profiles")["items"][0] and
     "gpu" not in query(report, "summary")["capabilities"],
     "an export without GPU rows: answers as before, no capabilities.gpu")
t.eq(query(report, "gpu")["total"], 0, "gpu on a report without GPU rows")
r = tap.run([DSIGHT, "query", report, "gpu", "--gpu-kind", "kernels"])
t.ok(r.returncode != 0 and "Unknown gpu_kind 'kernels'" in r.stdout + r.stderr,
     "an unknown --gpu-kind is a usage error")

# two profiles: a default-order page (each profile's scan stops after the
# rows a page can take; the total is counted, not read) is the merge of
# the profiles' own pages, and its total the sum of the kinds' totals
# (whose filter reads every row)
rnd = random.Random(135)
two = os.path.join(TMP, "two-exports")
os.makedirs(two, exist_ok=True)
for fn, kern, streams in (("a_decode_w0.sqlite", "2500", "2"), ("b_decode_w1.sqlite", "1800", "3")):
    r = tap.run([sys.executable, GEN, os.path.join(two, fn), "--ranges", "400",
                 "--kernels", kern, "--streams", streams])
    assert r.returncode == 0, r.stderr
rep2, _ = build(two, "two")
dur2 = query(rep2, "summary")["meta"]["duration"]
bad = []
for i in range(8):
    a, b = sorted(rnd.uniform(0, dur2) for _ in range(2)) if i else (0.0, dur2)
    off = rnd.choice([0, 0, 7, 120])
    win = ["--from", repr(a), "--to", repr(b)]
    page = query(rep2, "gpu", *win, "--limit", "40", "--offset", str(off))
    per = [query(rep2, "gpu", *win, "--profile", str(pf), "--limit", str(off + 40))
           for pf in (0, 1)]
    merged = sorted(per[0]["items"] + per[1]["items"],
                    key=lambda x: (x["start"], x["profile"]))[off:off + 40]
    kinds = sum(query(rep2, "gpu", *win, "--gpu-kind", k, "--limit", "0")["total"]
                for k in ("kernel", "memcpy", "memset"))
    if page["items"] != merged or page["total"] != kinds or \
            page["total"] != per[0]["total"] + per[1]["total"] or \
            (i == 0 and not (per[0]["total"] and per[1]["total"])):
        bad.append((a, b, off, page["total"], kinds, len(page["items"]), len(merged)))
t.eq(bad, [], "two profiles: default-order pages merge the profiles' pages; "
     "totals equal the kinds' (8 windows, offsets up to 120)")

# a --single-file report keeps no GPU rows outside its parts: the gpu
# kinds say so (exit 2) instead of answering none, and the rest still work
one = os.path.join(TMP, "one")
shutil.rmtree(one, ignore_errors=True)
r = tap.run([DSIGHT, "build", "--nsys-sqlite", small, "-o", one, "--single-file"])
assert r.returncode == 0, r.stderr
doc = os.path.join(one, "trace-data.json.gz")
for args in (["gpu", "--limit", "1"], ["gpu", "--group-by", "name"],
             ["timeline", "--of", "gpu", "--bucket", "1"]):
    r = tap.run([DSIGHT, "query", doc] + args)
    t.ok(r.returncode == 2 and "GPU rows are kept only in its SQLite cache"
         in r.stdout + r.stderr and "without --single-file" in r.stdout + r.stderr,
         "a single-file report: %s is a usage error naming the cache" % " ".join(args),
         r.stdout + r.stderr)
t.ok(query(doc, "summary")["capabilities"].get("gpu") and
     query(doc, "nsys", "--limit", "1")["total"] > 0,
     "a single-file report still says it holds GPU rows, and answers nsys")

# a hostile cache: a GPU kind out of range in the rows or in the key
# summary is a clear error naming it, never a read past the kind names
bad_rep = os.path.join(TMP, "badkind")
shutil.rmtree(bad_rep, ignore_errors=True)
shutil.copytree(rep, bad_rep)
db = sqlite3.connect(os.path.join(bad_rep, "trace-data.sqlite"))
db.execute("UPDATE dsight_gpu SET kind = 9 WHERE ordinal = 3")
db.execute("UPDATE dsight_gpu_sum_keys SET kind = -4 WHERE seq = 0")
db.commit()
db.close()
for args, env in ((["gpu", "--group-by", "gpu_kind"], None),
                  (["gpu", "--group-by", "gpu_kind"], {"DSIGHT_NO_SUMMARIES": "1"}),
                  (["gpu", "--sort", "duration", "--limit", "3"], None)):
    r = tap.run([DSIGHT, "query", bad_rep] + args,
                env=dict(os.environ, **env) if env else None)
    t.ok(r.returncode not in (0, -11, -6) and "unknown kind" in r.stderr +
         r.stdout, "a cache with a GPU kind out of range: %s%s fails clearly"
         % (" ".join(args), " (no summaries)" if env else ""),
         "rc %s: %s" % (r.returncode, r.stderr[-300:]))

# --max-profile-events counts GPU rows separately
out = os.path.join(TMP, "capped")
shutil.rmtree(out, ignore_errors=True)
r = tap.run([DSIGHT, "build", "--nsys-sqlite", small, "-o", out,
             "--max-profile-events", "1000"])
t.ok(r.returncode == 0 and "GPU row limit reached (1000)" in r.stderr,
     "--max-profile-events caps GPU rows with a warning")
ans = query(out, "gpu", "--limit", "0")
t.eq((query(out, "profiles")["items"][0]["gpu"]["rows"], ans["partial"]),
     (1000, True), "a capped profile: 1000 GPU rows, partial")
t.done()

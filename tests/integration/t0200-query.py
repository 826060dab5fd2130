#!/usr/bin/env python3
"""dsight query: CLI flags, output, exit codes and errors; both backends of
the fixture and generated captures give byte-identical answers (in-process
parity over every kind, fixed and random parameter sets)."""
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
FIX = tap.FIXTURE
q = tap.query
err_of = tap.err_of
ASAN = "asan" in os.path.basename(tap.BUILD.rstrip("/"))






def usage_error(args, msg, name):
    r = q(*args)
    t.ok(r.returncode == 2 and err_of(r) == {"ok": False, "error": msg} and r.stdout == "",
         name, "rc=%d stderr=%r" % (r.returncode, r.stderr))


# ---- output shape ----
r = q(FIX)
t.ok(r.returncode == 0 and r.stdout.count("\n") == 1 and r.stdout.endswith("\n"),
     "summary: one JSON line on stdout", r.stderr)
summary = json.loads(r.stdout)
t.eq(list(summary), ["schema", "meta", "audit", "capabilities", "counts"], "summary: keys")
t.eq(summary["counts"], {"requests": 4, "sessions": 3, "workers": 2, "metrics": 5,
                         "profiles": 2, "iterations": 4}, "summary: counts")
r2 = q(FIX, "summary", "--pretty")
t.ok(r2.returncode == 0 and r2.stdout.startswith('{\n  "schema": "srtctl-trace/1",')
     and json.loads(r2.stdout) == summary, "--pretty indents the same document")

r = q(FIX, "nsys", "--from", "3", "--to", "4")
j = json.loads(r.stdout)
t.ok(r.returncode == 0 and j["range"] == [3.0, 4.0] and '"range":[3.0,4.0]' in r.stdout
     and j["total"] == 1 and j["items"][0]["rowid"] == 3, "nsys: long root range, range as reals")
r = q(FIX, "nsys", "--name", "ÜNICODE")
j = json.loads(r.stdout)
t.ok(j["total"] == 2 and all(i["name"] == "Ünicode nested range" for i in j["items"]),
     "nsys --name ÜNICODE matches 'Ünicode nested range'")
r = q(FIX, "requests", "--limit", "0")
t.ok(r.stdout.startswith('{"total":4,"items":[],"offset":0,"limit":0,'), "limit 0: exact total, no items")
r = q(FIX, "profiles", "--profile", "0")
t.eq(json.loads(r.stdout)["total"], 1, "--profile 0 is a real filter")
r = q(FIX, "metrics", "--rank", "0", "--limit=1", "--offset=1")
j = json.loads(r.stdout)
t.ok(j["total"] == 3 and [i["id"] for i in j["items"]] == [1], "metrics: rank as text, series paging, --flag=value")
r = q(FIX, "metrics", "--name", "gpu_utilization", "--from", "3", "--to", "4", "--points")
t.ok('"min":18446744073709551615,"max":100000000000000000000' in r.stdout
     and '"points_total":2,"points_truncated":false' in r.stdout, "metrics: exact big integers")
r = q(FIX, "cpu", "--worker", "frontend")
t.ok('"total_samples":5' in r.stdout and json.loads(r.stdout)["items"][0] ==
     {"symbol": "main", "samples": 5, "fraction": 1.0}, "cpu: inclusive hotspots")
r = q(FIX, "lifecycle", "--request", "req-001")
t.ok(r.returncode == 0 and json.loads(r.stdout)["request"] == "req-001", "lifecycle by --request")

# ---- flag type errors come first, then validation in order ----
usage_error([FIX, "--limit", "abc"], "--limit must be an integer", "--limit abc")
usage_error([FIX, "--limit", "1.5"], "--limit must be an integer", "--limit 1.5")
usage_error([FIX, "--from", "x"], "--from must be a number", "--from x")
usage_error([FIX, "--to", ""], "--to must be a number", "--to ''")
usage_error([FIX, "--rank", "0.5"], "--rank must be an integer", "--rank 0.5")
usage_error([FIX, "--profile", "p"], "--profile must be an integer", "--profile p")
usage_error([FIX, "--min-ttft-ms", "fast"], "--min-ttft-ms must be a number", "--min-ttft-ms fast")
usage_error([FIX, "--offset", "-"], "--offset must be an integer", "--offset -")
usage_error(["/nonexistent/x", "--limit", "abc"], "--limit must be an integer",
            "type errors before touching the dataset")
RANGE = "Require 0 <= start < end <= 12.0 (run duration in seconds from origin_ns)"
usage_error([FIX, "nope", "--from", "4", "--to", "3", "--limit", "5000"], RANGE, "start >= end")
usage_error([FIX, "--to", "12.5"], RANGE, "end beyond duration")
usage_error([FIX, "--from", "-1"], RANGE, "negative start")
usage_error([FIX, "--from", "nan"], RANGE, "nan start")
usage_error([FIX, "nope", "--limit", "1001", "--min-ttft-ms", "-1"],
            "Require integer offset >= 0 and 0 <= limit <= 1000", "limit 1001")
usage_error([FIX, "--offset", "-1"], "Require integer offset >= 0 and 0 <= limit <= 1000", "offset -1")
usage_error([FIX, "nope", "--min-ttft-ms", "-1"], "min_ttft_ms must be finite and nonnegative", "min_ttft_ms -1")
usage_error([FIX, "nope"], "Unknown query kind 'nope'; choose from summary, requests, request, "
            "lifecycle, metrics, profiles, nsys, gpu, cpu, iterations, sources, server_spans, "
            "sessions, workers, families, timeline, sql", "unknown kind")
usage_error([FIX, "request", "--request", "zzz"], "Unknown client request: zzz", "unknown request")
usage_error([FIX, "request"], "request requires a request id (--request ID)", "missing request id")
usage_error([FIX, "lifecycle"], "lifecycle requires a request id (--request ID)",
            "lifecycle: missing request id")
r = q("--remote", "somewhere", FIX, "summary")
t.ok(r.returncode == 2 and "not both" in err_of(r).get("error", ""), "--remote with a DATASET is a usage error")
r = q()
t.ok(r.returncode == 2 and "missing DATASET" in err_of(r).get("error", ""), "missing DATASET")
r = q(FIX, "--bogus")
t.ok(r.returncode == 2 and "unknown flag" in err_of(r).get("error", ""), "unknown flag")

# ---- data errors exit 1 ----
r = q(os.path.join(t.tmp, "missing"))
t.ok(r.returncode == 1 and err_of(r)["ok"] is False and "No such file" in err_of(r)["error"],
     "missing dataset: exit 1")
junk = os.path.join(t.tmp, "junk.bin")
with open(junk, "wb") as f:
    f.write(b"\x00\x01binary junk, not a dataset")
r = q(junk)
t.ok(r.returncode == 1 and "neither a DSight SQLite cache nor an evidence document" in err_of(r)["error"],
     "non-SQLite, non-JSON file: exit 1")
os.mkdir(os.path.join(t.tmp, "empty"))
r = q(os.path.join(t.tmp, "empty"))
t.ok(r.returncode == 1 and "trace-data.sqlite" in err_of(r)["error"], "directory without data file")

# ---- --help ----
r = q("--help")
kinds = ["summary", "requests", "request", "lifecycle", "metrics", "profiles", "nsys", "cpu",
         "iterations", "sources", "server_spans", "sessions", "workers", "families"]
flags = ["--from", "--to", "--request", "--session", "--agent", "--worker", "--rank", "--profile",
         "--name", "--search", "--min-ttft-ms", "--offset", "--limit", "--points", "--pretty", "--remote"]
examples = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith("dsight query ./report")]
t.ok(r.returncode == 0 and all(f in r.stdout for f in flags)
     and all(any((k in e[3:4]) or (k == "summary" and len(e) == 3) for e in examples) for k in kinds),
     "--help lists flags and one example per kind")

# ---- SQLite cache built by dsight build ----
report = os.path.join(t.tmp, "report")
b = tap.run([DS, "build", FIX, "-o", report])
if t.ok(b.returncode == 0, "dsight build of the fixture", b.stderr):
    cache = os.path.join(report, "trace-data.sqlite")
    os.utime(cache, (1000000000, 1000000000))
    before = os.stat(cache)
    listing = sorted(os.listdir(report))
    same = True
    for args in (["summary"], ["requests", "--search", "SESS"], ["nsys", "--from", "2", "--to", "2.2"],
                 ["metrics", "--points"], ["cpu", "--from", "1.5", "--to", "3"], ["iterations", "--rank", "1"],
                 ["families", "--name", "QUEUE"], ["request", "--request", "req-002"],
                 ["metrics", "--name", "log_decode_request_limit", "--from", "5", "--points", "--pretty"]):
        a, c = q(FIX, *args), q(report, *args)
        if a.returncode != 0 or a.stdout != c.stdout:
            same = False
            print("# differs: %r\n#  %s\n#  %s" % (args, a.stdout[:300], c.stdout[:300]))
    t.ok(same, "report directory (SQLite) and document answer byte-identically")
    after = os.stat(cache)
    t.ok(after.st_mtime_ns == before.st_mtime_ns and after.st_size == before.st_size
         and sorted(os.listdir(report)) == listing,
         "read-only queries leave the cache's mtime and directory unchanged")
    v2 = os.path.join(t.tmp, "v2.sqlite")
    shutil.copy(cache, v2)
    con = sqlite3.connect(v2)
    con.execute("PRAGMA user_version = 2")
    con.commit()
    con.close()
    r = q(v2)
    t.ok(r.returncode == 1 and err_of(r)["error"].startswith(
        "Unsupported DSight SQLite version: 2; expected 1") and "rebuild" in err_of(r)["error"],
        "wrong user_version: exit 1 with the version message")

# ---- a --single-file report is queried through its trace-data.json.gz ----
single = os.path.join(t.tmp, "single")
b = tap.run([DS, "build", FIX, "-o", single, "--single-file"])
if t.ok(b.returncode == 0, "dsight build --single-file", b.stderr):
    same = all(q(FIX, *a).stdout == q(single, *a).stdout and q(single, *a).returncode == 0
               for a in (["summary"], ["nsys", "--from", "10", "--to", "11"], ["metrics", "--points"],
                         ["cpu"], ["families"]))
    t.ok(same, "single-file report directory answers like its document")

# ---- in-process parity over both backends ----
parity = tap.binpath("query-parity")
r = tap.run([parity, FIX], timeout=600)
sys.stdout.write(r.stdout)
t.ok(r.returncode == 0, "parity tool: fixture")
gen = tap.binpath("gen-capture")
# the medium capture only in the full tier (DSIGHT_TEST_LONG=1)
presets = ["small"] if ASAN or not tap.LONG else ["small", "medium"]
for preset in presets:
    doc = os.path.join(t.tmp, preset + ".json")
    g = tap.run([gen, "--preset", preset, "-o", doc])
    if not t.ok(g.returncode == 0, "gen-capture %s" % preset, g.stderr):
        continue
    rep = os.path.join(t.tmp, preset + "-report")
    b = tap.run([DS, "build", doc, "-o", rep], timeout=600)
    t.ok(b.returncode == 0, "dsight build %s" % preset, b.stderr)
    r = tap.run([parity, doc, rep, "--random", str(tap.loops(200, 40)), "--seed", "7"], timeout=900)
    sys.stdout.write(r.stdout)
    t.ok(r.returncode == 0, "parity tool: %s capture (document vs dsight build cache)" % preset)

sys.exit(t.done())

#!/usr/bin/env python3
"""The sql kind and the views of trace-data.sqlite: every view answers in
SQLite itself; the sql kind returns exact values; every unsafe statement is
refused (or capped) with a clear message and the cache stays byte-identical;
the time limit; datasets without views; the same answers through a warm
session, where a long statement does not hold the other queries."""
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
FIX = tap.FIXTURE
q = tap.query
err_of = tap.err_of






def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


rep = os.path.join(t.tmp, "report")
sl.build_report(FIX, rep)
db = os.path.join(rep, "trace-data.sqlite")
before = sha(db)
mtime = os.stat(db).st_mtime_ns

# ---- the views, read by SQLite itself ----
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
cols = {}
for v in ["nvtx", "cpu_samples", "cpu_frames", "metric_points", "series", "requests",
          "request_workers", "lifecycle_stages", "server_spans", "profiles", "workers",
          "sessions", "iterations", "sources"]:
    cur = con.execute("SELECT * FROM %s" % v)
    cols[v] = [d[0] for d in cur.description]
    cur.fetchall()
t.eq(cols["nvtx"], ["profile", "worker", "rank", "tid", "start", "end", "duration", "name",
                    "source_row", "ordinal", "depth", "thread_name"], "nvtx columns")
t.eq(cols["metric_points"], ["series", "name", "worker", "rank", "time", "value", "value_text",
                             "source_id", "source_row"], "metric_points columns")
t.eq(cols["requests"], ["id", "session", "agent", "conversation", "start", "end", "first",
                        "ttft_ms", "duration", "input_tokens", "output_tokens", "cached_tokens",
                        "status", "client_kind"], "requests columns")
t.eq(cols["server_spans"], ["id", "request", "name", "worker", "role", "start", "end"],
     "server_spans columns")
t.eq(cols["lifecycle_stages"], ["request", "name", "worker", "start", "end"],
     "lifecycle_stages columns")
t.eq(cols["series"], ["id", "name", "worker", "rank", "unit", "temporal", "component",
                      "family_group"], "series columns")
t.ok(cols["profiles"][:2] == ["id", "worker"] and "event_count" in cols["profiles"]
     and "names" not in cols["profiles"], "profiles: one column per scalar key", cols["profiles"])

with open(FIX) as f:
    doc = json.load(f)
nev = sum(len(p["events"]) for p in doc["profiles"])
t.eq(con.execute("SELECT count(*) FROM nvtx").fetchone()[0], nev, "nvtx holds every event")
row = con.execute("SELECT profile, name, duration, ordinal FROM nvtx WHERE profile = 0 AND "
                  "ordinal = 0").fetchone()
ev = doc["profiles"][0]["events"][0]
t.eq(row, (0, doc["profiles"][0]["names"][ev[2]], ev[1] - ev[0], 0),
     "nvtx: name from the dictionary, duration = end - start, ordinal")
big = con.execute("SELECT value_text, typeof(value) FROM metric_points WHERE "
                  "value_text = '18446744073709551615'").fetchall()
t.eq(big, [("18446744073709551615", "real")], "metric_points: a value beyond 64 bits keeps its text")
t.eq(con.execute("SELECT count(*) FROM metric_points WHERE value_text IS NULL AND value IS NULL")
     .fetchone()[0], sum(1 for s in doc["metrics"] for p in s["points"] if p[1] is None),
     "metric_points: null values have a NULL value_text")
t.eq(con.execute("SELECT request, worker FROM request_workers ORDER BY 1, 2").fetchall(),
     sorted((r["id"], w) for r in doc["requests"] for w in r["workers"]), "request_workers")
nspans = sum(len(r["spans"]) for r in doc["requests"]) + len(doc["server_spans"])
t.eq(con.execute("SELECT count(*), count(request) FROM server_spans").fetchone(),
     (nspans, nspans - len(doc["server_spans"])), "server_spans: joined and unjoined")
prof = doc["profiles"][1]
stacks = prof["cpu"]["stacks"]
t.eq(con.execute("SELECT stack, depth, symbol FROM cpu_frames WHERE profile = 1 ORDER BY 1, 2")
     .fetchall(),
     [(k, d, prof["cpu"]["names"][n]) for k, s in enumerate(stacks) for d, n in enumerate(s)],
     "cpu_frames: the symbols of each stack, depth-ordered")
# (sqlite_stat1: SQLite's own planner statistics, written by the build's ANALYZE)
master = con.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'dsight_%' AND "
                     "name NOT LIKE 'sqlite_%' AND type != 'view' ORDER BY name").fetchall()
t.eq(master, [("table", "catalog"), ("table", "durations"), ("index", "event_window"),
              ("table", "events"), ("index", "point_window"), ("table", "points"),
              ("index", "sample_window"), ("table", "samples")],
     "the v1 tables and indexes are unchanged; dsight's own tables are prefixed dsight_")
con.close()

# ---- the sql kind: shape and values ----
r = q(rep, "sql", "--sql", "SELECT 9223372036854775807 AS i, 0.1 AS r, 1e999 AS inf, "
      "-1e999 AS ninf, x'00ff10' AS b, NULL AS n, CAST(x'41ff42' AS TEXT) AS bad, 'é\n' AS s")
t.ok(r.returncode == 0 and r.stdout ==
     '{"columns":["i","r","inf","ninf","b","n","bad","s"],"rows":[[9223372036854775807,0.1,null,'
     'null,"00ff10",null,"A\ufffdB","é\\n"]],"row_count":1,"truncated":false}\n',
     "sql: exact integers, repr reals, non-finite as null, blobs as hex, invalid UTF-8 as U+FFFD",
     r.stdout + r.stderr)
r = q(rep, "sql", "--sql", "SELECT name, count(*) AS n FROM nvtx GROUP BY name ORDER BY n DESC, "
      "name LIMIT 2 -- trailing comment\n /* and another */ ")
j = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(j.get("columns") == ["name", "n"] and j.get("row_count") == 2 and not j.get("truncated"),
     "sql: one statement followed by comments", r.stderr)
r = q(rep, "sql", "--sql", "SELECT * FROM pragma_table_info('nvtx')")
t.ok(r.returncode == 0 and json.loads(r.stdout)["row_count"] == 12,
     "sql: a read-only pragma function describes a view", r.stderr)


def refused(sql, msg, name, code=2, extra=()):
    r = q(rep, "sql", "--sql", sql, *extra)
    t.ok(r.returncode == code and err_of(r) == {"ok": False, "error": msg} and r.stdout == "",
         name, "rc=%d stderr=%r" % (r.returncode, r.stderr))


refused("DELETE FROM events", "sql is read-only: DELETE is not allowed", "DELETE is refused")
refused("DROP TABLE events", "sql is read-only: DROP is not allowed", "DROP is refused")
refused("DROP VIEW nvtx", "sql is read-only: DROP is not allowed", "DROP VIEW is refused")
refused("CREATE TABLE x (a)", "sql is read-only: CREATE is not allowed", "CREATE is refused")
refused("CREATE TEMP TABLE x (a)", "sql is read-only: CREATE is not allowed",
        "CREATE TEMP is refused")
refused("INSERT INTO catalog VALUES ('{}', 'x')", "sql is read-only: INSERT is not allowed",
        "INSERT is refused")
refused("UPDATE catalog SET generation = 'x'", "sql is read-only: UPDATE is not allowed",
        "UPDATE is refused")
refused("ATTACH DATABASE '%s' AS other" % os.path.join(t.tmp, "other.db"),
        "sql is read-only: ATTACH is not allowed", "ATTACH is refused")
t.ok(not os.path.exists(os.path.join(t.tmp, "other.db")), "ATTACH created no file")
pragma_msg = ("sql is read-only: PRAGMA %s is not allowed (allowed: table_info, table_xinfo, "
              "table_list, index_list, index_info, index_xinfo, foreign_key_list, database_list, "
              "function_list, collation_list, module_list, pragma_list, and reading "
              "user_version, schema_version, application_id, encoding, page_size, page_count, "
              "freelist_count)")
refused("PRAGMA journal_mode = WAL", pragma_msg % "journal_mode", "a writing PRAGMA is refused")
refused("PRAGMA user_version = 7", pragma_msg % "user_version", "setting user_version is refused")
refused("SELECT * FROM pragma_journal_mode",
        "sql does not allow this table-valued function (allowed: json_each, json_tree and the "
        "pragma_ functions of the read-only pragmas)", "a pragma_ function outside the list")
refused("SELECT load_extension('libx')", "sql does not allow the function load_extension()",
        "load_extension is refused")
refused("SELECT fts3_tokenizer('simple')", "sql does not allow the function fts3_tokenizer()",
        "fts3_tokenizer is refused")
refused("BEGIN", "sql is read-only: a transaction (BEGIN, COMMIT, ROLLBACK) is not allowed",
        "a transaction is refused")
refused("SELECT 1; SELECT 2", "Give one SQL statement", "two statements are refused")
refused("SELECT 1; DELETE FROM events", "Give one SQL statement",
        "a write after a read is refused")
refused("SELEC 1", 'near "SELEC": syntax error', "a syntax error is a usage error")
refused("SELECT nope FROM nvtx", "no such column: nope", "SQLite's own message")
refused("", "sql needs --sql STATEMENT", "an empty statement")
refused("-- only a comment", "sql needs --sql STATEMENT", "a statement of comments only")
r = q(rep, "sql")
t.ok(r.returncode == 2 and err_of(r)["error"] == "sql needs --sql STATEMENT", "no --sql")
for bad in ["0", "31", "-1", "inf"]:
    r = q(rep, "sql", "--sql", "SELECT 1", "--timeout", bad)
    t.ok(r.returncode == 2 and err_of(r)["error"] == "--timeout must be > 0 and <= 30",
         "--timeout %s is refused" % bad, r.stderr)
r = q(rep, "sql", "--sql", "SELECT 1", "--timeout", "abc")
t.ok(r.returncode == 2 and err_of(r)["error"] == "--timeout must be a number", "--timeout abc")

# ---- runaway statements: the time limit and the caps ----
t0 = time.time()
refused("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "The statement ran longer than 0.5 s", "a runaway recursive CTE hits the time limit",
        code=1, extra=("--timeout", "0.5"))
t.ok(time.time() - t0 < 5, "the time limit stops it promptly")
r = q(rep, "sql", "--sql", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
      "SELECT x FROM c")
j = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(j.get("row_count") == 10000 and j.get("truncated") is True and j["rows"][-1] == [10000],
     "an endless result is capped at 10,000 rows (truncated: true)", r.stderr[:300])
r = q(rep, "sql", "--sql", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
      "LIMIT 10) SELECT zeroblob(1000000) FROM c")
j = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(j.get("truncated") is False and j["row_count"] == 10 and len(r.stdout) > 16 << 20,
     "the CLI prints an answer past 16 MiB whole: its rows stream (one reply stays cut "
     "at 16 MiB: t0227)", r.stderr[:300])

r = q(rep, "sql", "--sql", "SELECT 1 AS a UNION ALL SELECT zeroblob(20000000)")
j = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(j.get("rows") == [[1]] and j.get("truncated") is True,
     "a single value larger than 16 MiB ends the rows (truncated: true)", r.stderr[:300])

# SELECT * over every range of a capture with more rows than the cap
small = os.path.join(t.tmp, "small.json")
r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.2", "-o", small])
t.ok(r.returncode == 0, "a capture of 20,000 ranges generated", r.stderr)
srep = sl.build_report(small, os.path.join(t.tmp, "small"))
sdb = os.path.join(srep, "trace-data.sqlite")
sbefore = sha(sdb)
r = q(srep, "sql", "--sql", "SELECT * FROM nvtx")
j = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(j.get("row_count") == 10000 and j.get("truncated") is True,
     "SELECT * FROM nvtx over every range is capped", r.stderr[:300])
t.eq(sha(sdb), sbefore, "the small cache is byte-identical afterwards")

t.eq(sha(db), before, "the cache is byte-identical after every refused statement")
t.eq(os.stat(db).st_mtime_ns, mtime, "the cache's mtime is unchanged")
t.eq(sorted(os.listdir(rep)), ["detail", "index.html", "manifest.json", "trace-data.sqlite"],
     "no file appeared beside the cache")

# ---- datasets without the views ----
no_cache = ("sql needs the SQLite cache of a progressive report: run dsight build without "
            "--single-file")
r = q(FIX, "sql", "--sql", "SELECT 1")
t.ok(r.returncode == 2 and err_of(r)["error"] == no_cache, "an evidence document", r.stderr)
single = os.path.join(t.tmp, "single")
r = tap.run([DS, "build", FIX, "-o", single, "--single-file"])
r = q(single, "sql", "--sql", "SELECT 1")
t.ok(r.returncode == 2 and err_of(r)["error"] == no_cache, "a single-file report", r.stderr)
bare = os.path.join(t.tmp, "bare.sqlite")
shutil.copy(db, bare)
c2 = sqlite3.connect(bare)
for (name,) in c2.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall():
    c2.execute('DROP VIEW "%s"' % name)
c2.commit()
c2.close()
r = q(bare, "sql", "--sql", "SELECT 1")
t.ok(r.returncode == 2 and err_of(r)["error"] == no_cache, "a cache without the views", r.stderr)
r = q(bare, "summary")
t.ok(r.returncode == 0, "that cache still answers the other kinds")

# ---- through a warm session ----
path = os.path.join(t.tmp, "sql.sock")
s = sl.Server(rep, "--path", path, "--idle-timeout", "300")
t.ok(s.alive(), "server started", s.line)
stmt = "SELECT id, ttft_ms FROM requests ORDER BY ttft_ms DESC LIMIT 3"
local = q(rep, "sql", "--sql", stmt)
remote = tap.run([DS, "query", "--remote", path, "sql", "--sql", stmt])
t.ok(remote.returncode == 0 and remote.stdout == local.stdout,
     "remote sql answers byte-identically", remote.stderr)
c = sl.Conn(path, timeout=60)
rr = c.call("query", {"kind": "sql", "sql": "SELECT 1", "timeout": 31})
t.ok(rr.get("error", {}).get("code") == -32602 and
     rr["error"]["message"] == "timeout must be > 0 and <= 30", "RPC: timeout out of range", rr)
rr = c.call("query", {"kind": "sql", "sql": "DELETE FROM events"})
t.ok(rr.get("error", {}).get("code") == -32602, "RPC: a refused statement is -32602", rr)
runaway = {"kind": "sql", "timeout": 4, "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
           "SELECT x + 1 FROM c) SELECT count(*) FROM c"}
other = sl.Conn(path, timeout=60)
done0 = other.call("status")["result"]["server_time_us"]["samples"]
t0 = time.time()
c.send("query", runaway, rid=101)
c.send("query", runaway, rid=102)
answers = [other.call("query", {"kind": "nsys", "limit": 5}) for _ in range(8)]
done1 = other.call("status")["result"]["server_time_us"]["samples"]
t.ok(all("result" in a for a in answers) and done1 - done0 == 8,
     "other queries answer while sql statements run (8 finished, no sql yet: %d)"
     % (done1 - done0))
got = [c.recv(), c.recv()]
both_s = time.time() - t0
t.ok(all(g.get("error", {}).get("message") == "The statement ran longer than 4.0 s" for g in got),
     "both statements stop at their limit", got)
t.ok(both_s >= 7.9, "sql statements run one at a time per session (%.2fs for two)" % both_s)
s.stop()
t.eq(sha(db), before, "the cache is byte-identical after the session")
sys.exit(t.done())

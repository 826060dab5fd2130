#!/usr/bin/env python3
"""The grouped aggregates a warm session's sql engine computes itself
(qsqlshape.c, qsqlagg.c) answer exactly what SQLite answers: random
statements of the shape (keys, buckets, count/sum/total/avg/min/max, WHERE
literals, ORDER BY with ties, LIMIT/OFFSET, odd spacing, comments and
case) give byte-identical answers from a session whose engine computes
them and one whose engine leaves them to SQLite over the same virtual
tables (DSIGHT_SQL_NATIVE=0), and the same rows as a session without the
engine (--no-sql-engine: the file's views, which read the rows in another
order: see same()), on the fixture, a mutation of it (integer, real, NULL, -0.0 and huge values,
integer sums that overflow) and a small capture (in the full tier also the
whole medium capture and one of 20,000 requests); the session's status
counts the statements the engine answered (sql_native), so the test fails
when the shape is silently never used; statements just outside the shape
are left to SQLite and still agree; a statement stopped by its time limit
says so."""
import copy
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
N = 400 if tap.LONG else 120

KEYS = {"nvtx": ["name", "worker", "rank", "profile"],
        "metric_points": ["name", "worker", "rank", "series"]}
REALS = {"nvtx": ["start", '"end"', "duration"], "metric_points": ["time"]}
AGGS = {"nvtx": ["start", '"end"', "duration", "source_row", "ordinal", "depth"],
        "metric_points": ["time", "value", "value"]}
FNS = ["count", "sum", "total", "avg", "min", "max"]


def status(sock):
    c = sl.Conn(sock)
    try:
        return c.call("status")["result"]
    finally:
        c.close()


def ask(conn, sql):
    """The answer's frame, byte for byte (the same request id on both
    connections)."""
    conn.send("query", {"kind": "sql", "sql": sql, "max_rows": 1000000}, rid=1)
    return conn.recv_bytes()


def same(a, b):
    """The same rows as a multiset, a number within rounding whatever its
    type: the file's views read the rows in another order than the
    engine's virtual tables (by series or profile rather than by name), so
    reals add in another order, min and max keep another of two equal
    values (0 or 0.0), ORDER BY puts ties in another order, and an integer
    sum may overflow on one side only (SQLite does the same with another
    plan; the byte-for-byte check is against the same virtual tables)."""
    def key(v):
        return (0, float(v)) if isinstance(v, (int, float)) else (1, repr(v))

    def eq(x, y):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return x == y or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300)
        return x == y
    a, b = json.loads(a), json.loads(b)
    if "result" not in a or "result" not in b:
        msgs = [r["error"]["message"] for r in (a, b) if "error" in r]
        return a.get("error") == b.get("error") or "integer overflow" in msgs
    ra, rb = (sorted(r["result"]["data"]["rows"], key=lambda row: [key(v) for v in row])
              for r in (a, b))
    return len(ra) == len(rb) and all(len(x) == len(y) and all(map(eq, x, y))
                                      for x, y in zip(ra, rb))


def lit(v):
    if isinstance(v, str):
        return "'%s'" % v.replace("'", "''")
    return repr(v)


def statement(rnd, table, texts, nums):
    """A random statement of the shape over table; texts: values of the
    text keys; nums: values of the row columns."""
    keys = rnd.sample(KEYS[table], rnd.choice([0, 1, 1, 1, 2, 3]))
    if rnd.random() < 0.45:
        col = rnd.choice(REALS[table])
        div = rnd.choice(["10", "1", "0.5", "3", "7.5", "0.001", "1e2", None])
        keys.insert(rnd.randrange(len(keys) + 1),
                    "CAST(%s AS INT)" % col if div is None else
                    "CAST(%s / %s AS INT)" % (col, div))
    items = []  # (text, alias, is_key_index or None)
    for k, key in enumerate(keys):
        if rnd.random() < 0.8:
            items.append([key, None, k])
    for _ in range(rnd.randint(0 if items else 1, 4)):
        fn = rnd.choice(FNS)
        arg = "*" if fn == "count" and rnd.random() < 0.4 else rnd.choice(AGGS[table])
        items.append(["%s(%s)" % (fn, arg), None, None])
    rnd.shuffle(items)
    for k, it in enumerate(items):
        if rnd.random() < 0.4:
            it[1] = "a%d" % k
    sel = ", ".join(x + ("" if a is None else rnd.choice([" AS ", " "]) + a)
                    for x, a, _ in items)
    conds = []
    for _ in range(rnd.choice([0, 0, 1, 1, 2, 3])):
        kind = rnd.random()
        if kind < 0.35 and texts:
            col = rnd.choice(["name", "worker"])
            conds.append("%s = %s" % (col, lit(rnd.choice(texts + ["nope", "0"]))))
        elif kind < 0.45:
            col = "profile" if table == "nvtx" else "series"
            conds.append("%s = %s" % (col, rnd.choice(["0", "1", "2", "1.0", "-1"])))
        else:
            col = rnd.choice(AGGS[table])
            v = rnd.choice(nums) if nums else 1
            op = rnd.choice(["=", "<", "<=", ">", ">=", "BETWEEN"])
            if op == "BETWEEN":
                conds.append("%s BETWEEN %r AND %r" % (col, v, v + rnd.choice([1, 10, 0.5])))
            else:
                conds.append("%s %s %r" % (col, op, v))
    sql = "SELECT %s FROM %s" % (sel, table)
    if conds:
        sql += " WHERE " + " AND ".join(conds)
    if keys:
        refs = []
        for k, key in enumerate(keys):
            shown = [i for i, it in enumerate(items) if it[2] == k]
            r = rnd.random()
            if shown and r < 0.3:
                refs.append(str(shown[0] + 1))
            elif shown and items[shown[0]][1] and r < 0.6:
                refs.append(items[shown[0]][1])
            else:
                refs.append(key)
        sql += " GROUP BY " + ", ".join(refs)
    if rnd.random() < 0.6:
        terms = []
        for _ in range(rnd.randint(1, 2)):
            i = rnd.randrange(len(items))
            ref = items[i][1] if items[i][1] and rnd.random() < 0.5 else str(i + 1)
            terms.append(ref + rnd.choice(["", " ASC", " DESC", " DESC"]))
        sql += " ORDER BY " + ", ".join(terms)
    if rnd.random() < 0.4:
        sql += " LIMIT %d" % rnd.randint(0, 6)
        if rnd.random() < 0.5:
            sql += " OFFSET %d" % rnd.randint(0, 4)
    # the same statement as people type it
    if rnd.random() < 0.2:
        sql = sql.lower().replace("'", "'")
    if rnd.random() < 0.2:
        sql = sql.replace(" FROM ", "\n  FROM /* the table */ ").replace(", ", " ,\t")
    if rnd.random() < 0.2:
        sql += rnd.choice([";", " ; ", " -- done"])
    return sql


# statements just outside the shape: SQLite answers them (sql_native does
# not move) and the answers still agree
OUTSIDE = [
    "SELECT name, count(*) FROM nvtx GROUP BY name HAVING count(*) > 1",
    "SELECT DISTINCT name FROM nvtx",
    "SELECT n.name, count(*) FROM nvtx n GROUP BY n.name",
    "SELECT name, count(*) FROM nvtx WHERE name LIKE 'a%' GROUP BY name",
    "SELECT name, count(DISTINCT worker) FROM nvtx GROUP BY name",
    "SELECT name, count(*) FROM nvtx GROUP BY name COLLATE NOCASE",
    "SELECT name, count(*) FROM nvtx GROUP BY name ORDER BY 1 NULLS LAST",
    "SELECT name, count(*) OVER () FROM nvtx",
    "SELECT worker AS name, count(*) FROM nvtx GROUP BY name",
    "SELECT min(name), max(worker) FROM nvtx",
    "SELECT name, max(thread_name) FROM nvtx GROUP BY name",
    "SELECT tid, count(*) FROM nvtx GROUP BY tid",
    "SELECT name, count(*) FROM nvtx WHERE start > '1' GROUP BY name",
    "SELECT name, max(value_text) FROM metric_points GROUP BY name",
    "SELECT name, sum(value) FROM metric_points WHERE name IN ('a', 'b') GROUP BY name",
    "SELECT name, time, max(value) FROM metric_points GROUP BY name",
    "SELECT CAST(time / 0 AS INT) AS b, count(*) FROM metric_points GROUP BY b",
    "SELECT CAST(time / 10 AS REAL) AS b, count(*) FROM metric_points GROUP BY b",
    "SELECT name, count(*) FROM main.nvtx GROUP BY name",
    "SELECT \"name\"\"\", count(*) FROM nvtx GROUP BY 1",
    "SELECT name, count(*) FROM nvtx GROUP BY name ORDER BY 1.0",
    "SELECT name, count(*) FROM nvtx GROUP BY name LIMIT -1",
    "WITH x AS (SELECT 1) SELECT name, count(*) FROM nvtx GROUP BY name",
    "SELECT name, count(*) FROM nvtx WHERE start > 1 OR start < 0 GROUP BY name",
    "SELECT name, count(*) FROM nvtx WHERE (start > 1) GROUP BY name",
]


def mutate(doc):
    """Metric values of every kind: integers (some near 2^62, so integer
    sums overflow), reals, NULL, -0.0; equal values of two types; many
    ties; NVTX ranges of repeated lengths."""
    d = copy.deepcopy(doc)
    odd = [3, 3.0, None, -0.0, 0.1 + 0.2, 1e300, -1e300, 2 ** 62, 2 ** 62, 7, 1 / 3,
           -5, 12.0, 9007199254740993, -9223372036854775808, 0, 5e-324]
    k = 0
    for m in d["metrics"]:
        extra = [[p[0] + 0.125 * j, None] + p[2:] for p in m["points"] for j in range(1, 4)]
        m["points"] = sorted(m["points"] + extra, key=lambda p: p[0])
        for p in m["points"]:
            p[1] = odd[k % len(odd)]
            k += 1
    # thread names: one named in the other profile only, one unnamed,
    # a tid with quotes, and ranges nested deeper
    for k, p in enumerate(d["profiles"]):
        p["threads"].append({"global_tid": "t\"%d" % k, "pid": 1, "tid": 2,
                             "name": "only-in-%d" % k})
        for j, e in enumerate(p["events"]):
            if j % 3 == 1:
                e[3] = "t\"%d" % ((k + j) % 2)
            if j % 2:  # equal starts across names and profiles
                e[0] = float(int(e[0]))
                e[1] = max(e[1], e[0])
    return d


def run_report(label, rep, n, seed, views=True):
    """views: compare with the file's views too (not on the mutation,
    whose reals span 600 orders of magnitude: another order of addition
    gives another sum there, not one within rounding)."""
    srv = sl.Server(rep, "--path", os.path.join(t.tmp, label + ".sock"),
                    "--idle-timeout", "300", label="dsightd " + label)
    vm = sl.Server(rep, "--path", os.path.join(t.tmp, label + "-vm.sock"),
                   "--idle-timeout", "300", env=sl.env_with(DSIGHT_SQL_NATIVE="0"),
                   label="dsightd DSIGHT_SQL_NATIVE=0 " + label)
    plain = sl.Server(rep, "--path", os.path.join(t.tmp, label + "-plain.sock"),
                      "--no-sql-engine", "--idle-timeout", "300",
                      label="dsightd --no-sql-engine " + label)
    sock, psock = srv.path, plain.path
    c, pc, vc = sl.Conn(sock), sl.Conn(psock), sl.Conn(vm.path)
    for s_, c_ in ((sock, c), (vm.path, vc)):
        ask(c_, "SELECT count(*) FROM nvtx")  # starts the engine's load
        t.ok(sl.wait_until(lambda: status(s_)["sql_engine"] != "loading", 60) and
             status(s_)["sql_engine"] == "ready", "%s: the engine is ready" % label,
             status(s_)["sql_engine"])
    rnd = random.Random(seed)
    texts, nums = [], {}
    for table in ("nvtx", "metric_points"):
        r = json.loads(ask(pc, "SELECT DISTINCT name FROM %s UNION SELECT DISTINCT worker"
                              " FROM %s" % (table, table)))["result"]["data"]["rows"]
        texts += [x[0] for x in r if isinstance(x[0], str)]
        col = "start" if table == "nvtx" else "value"
        r = json.loads(ask(pc, "SELECT %s FROM %s WHERE %s IS NOT NULL ORDER BY random()"
                              " LIMIT 20" % (col, table, col)))["result"]["data"]["rows"]
        nums[table] = [x[0] for x in r] + [0, 1, 2.5, 300, -1]
    # the view's depth and thread_name, held by the engine: every range's
    listing = ("SELECT profile, ordinal, tid, depth, thread_name, typeof(depth),"
               " typeof(thread_name) FROM nvtx ORDER BY profile, ordinal")
    a, b = ask(c, listing), ask(pc, listing)
    n_ranges = len(json.loads(a)["result"]["data"]["rows"])
    t.ok(a == b and n_ranges > 0, "%s: depth and thread_name of the engine's nvtx are the"
         " file's (%d ranges)" % (label, n_ranges), (a[:300], b[:300]))
    bad = []
    for sql in ("SELECT depth, count(*) FROM nvtx GROUP BY 1 ORDER BY 1",
                "SELECT thread_name, count(*), min(depth) FROM nvtx GROUP BY 1 ORDER BY 1",
                "SELECT * FROM nvtx WHERE depth > 0 ORDER BY profile, ordinal",
                "SELECT * FROM nvtx WHERE depth = '1' OR thread_name = 1 ORDER BY 1, 10",
                "SELECT * FROM nvtx WHERE thread_name IS NULL AND tid IS NOT NULL"
                " ORDER BY profile, ordinal"):
        a, b = ask(c, sql), ask(pc, sql)
        if a != b:
            bad.append((sql, a[:300], b[:300]))
    t.ok(not bad, "%s: statements on depth and thread_name agree" % label, bad[:2])
    # ORDER BY start (time), ascending or descending, merges the groups'
    # rows: ties come in the scan order SQLite's stable sorter keeps
    # (start + 0 is sorted by SQLite)
    bad = []
    for table, col, where in (("nvtx", "start", ""), ("nvtx", "start", " WHERE profile = 0"),
                              ("nvtx", "start", " WHERE start >= 1 AND \"end\" < 8"),
                              ("nvtx", "start", " WHERE name = %s" % lit(texts[0] if texts else "x")),
                              ("metric_points", "time", ""),
                              ("metric_points", "time", " WHERE time BETWEEN 1 AND 3")):
        for tail in ("", " LIMIT 3", " LIMIT 5 OFFSET 2", " DESC", " DESC LIMIT 4",
                     " DESC LIMIT 5 OFFSET 3"):
            sql = "SELECT * FROM %s%s ORDER BY %s%s" % (table, where, col, tail)
            a = ask(c, sql)
            b = ask(c, sql.replace("ORDER BY %s" % col, "ORDER BY %s + 0" % col))
            if a != b:
                bad.append((sql, a[:300], b[:300]))
    t.ok(not bad, "%s: ORDER BY start or time gives SQLite's order, ties included" % label,
         bad[:2])
    before = status(sock)["sql_native"]
    bad, stmts = [], []
    for k in range(n):
        table = "nvtx" if k % 2 else "metric_points"
        stmts.append(statement(rnd, table, texts, nums[table]))
    fixed = ["SELECT name, count(*), avg(value), max(value) FROM metric_points GROUP BY name",
             "SELECT CAST(time / 10 AS INT) AS b, avg(value) FROM metric_points"
             " WHERE name = %s GROUP BY b ORDER BY b" % lit(texts[0] if texts else "x"),
             "SELECT name, count(*) AS n, sum(duration) AS busy FROM nvtx GROUP BY name"
             " ORDER BY busy DESC LIMIT 10",
             "SELECT worker, name, count(*) FROM nvtx WHERE start >= 0 AND start < 3"
             " GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 20",
             "SELECT count(*), sum(value), total(value), avg(value), min(value), max(value)"
             " FROM metric_points WHERE name = 'nope'",
             "SELECT sum(value), count(*) FROM metric_points",
             "SELECT name, sum(value) FROM metric_points GROUP BY name ORDER BY 2 DESC",
             "SELECT CAST(time / 0.5 AS INT), worker, min(value), max(value), count(value)"
             " FROM metric_points GROUP BY 2, 1 ORDER BY 4 DESC, 3"]
    worse = []
    for sql in fixed + stmts:
        a, b, p = ask(c, sql), ask(vc, sql), ask(pc, sql)
        if a != b:
            bad.append((sql, a[:400], b[:400]))
        # LIMIT picks among ties, which the file's plan orders otherwise
        if views and " LIMIT " not in sql.upper() and not same(a, p):
            worse.append((sql, a[:400], p[:400]))
    native = status(sock)["sql_native"] - before
    t.ok(not bad and status(vm.path)["sql_native"] == 0,
         "%s: %d statements of the shape answer byte for byte as SQLite does over the"
         " same virtual tables" % (label, len(fixed) + n), bad[:3])
    if views:
        t.ok(not worse, "%s: and the rows SQLite gives over the file's views" % label,
             worse[:3])
    # most statements are the engine's; an integer sum that overflows,
    # keys of two types that compare equal and the like are SQLite's
    t.ok(native >= 0.8 * (len(fixed) + n), "%s: the engine answered %d of them itself"
         % (label, native), native)
    before = status(sock)["sql_native"]
    bad = []
    for sql in OUTSIDE:
        a, b = ask(c, sql), ask(vc, sql)
        if a != b or (views and not same(a, ask(pc, sql))):
            bad.append((sql, a[:300], b[:300]))
    t.ok(not bad and status(sock)["sql_native"] == before,
         "%s: %d statements just outside the shape are SQLite's and agree"
         % (label, len(OUTSIDE)), (bad[:3], status(sock)["sql_native"] - before))
    c.close()
    pc.close()
    vc.close()
    vm.check(t)
    return srv, plain, sock


src = json.load(open(tap.FIXTURE))
srv, plain, _ = run_report("fixture", sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "fixture")),
                           N, 1)
srv.check(t)
plain.check(t)
mut = os.path.join(t.tmp, "mutated.json")
with open(mut, "w") as f:
    json.dump(mutate(src), f)
srv, plain, sock = run_report("mutated", sl.build_report(mut, os.path.join(t.tmp, "mutated")), N, 2,
                              views=False)
# an integer sum that overflows is SQLite's error, from both
c = sl.Conn(sock)
r = json.loads(ask(c, "SELECT sum(value) FROM metric_points WHERE value > 1e18 AND value < 1e19"))
t.ok("error" in r and "integer overflow" in r["error"]["message"],
     "mutated: an integer sum that overflows is SQLite's error", r)
c.close()
srv.check(t)
plain.check(t)

small = os.path.join(t.tmp, "small.json")
r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.05", "-o", small])
t.ok(r.returncode == 0, "gen-capture medium x0.05", r.stderr)
srv, plain, sock = run_report("medium x0.05", sl.build_report(small, os.path.join(t.tmp, "small")),
                              N // 2, 3)
# a statement its time limit stops says so: the engine's loop reads the
# clock every 65,536 rows (the capture has more points than that)
c = sl.Conn(sock)
before = status(sock)["sql_native"]
c.send("query", {"kind": "sql", "timeout": 1e-6,
                 "sql": "SELECT name, avg(value) FROM metric_points GROUP BY name"})
r = c.recv()
t.ok("error" in r and "ran longer than" in r["error"]["message"] and
     status(sock)["sql_native"] == before, "medium x0.05: the engine stops a statement at its"
     " time limit", r)
r = json.loads(ask(c, "SELECT name, avg(value) FROM metric_points GROUP BY name"))
t.ok("result" in r and status(sock)["sql_native"] == before + 1,
     "medium x0.05: the next statement on the connection is answered", r)
c.close()
srv.check(t)
plain.check(t)

# the full tier: the whole medium capture and one of 20,000 requests
if tap.LONG:
    for k, (label, args) in enumerate((("medium", ["--preset", "medium"]),
                                       ("20k requests",
                                        ["--preset", "small", "--requests", "20000"]))):
        src_ = os.path.join(t.tmp, label.replace(" ", "-") + ".json")
        r = tap.run([tap.binpath("gen-capture")] + args + ["-o", src_])
        t.ok(r.returncode == 0, "gen-capture " + " ".join(args), r.stderr)
        srv, plain, _ = run_report(label, sl.build_report(
            src_, os.path.join(t.tmp, label.replace(" ", "-"))), N // 2, 4 + k)
        srv.check(t)
        plain.check(t)
t.done()

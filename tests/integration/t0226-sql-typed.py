#!/usr/bin/env python3
"""The views over the typed tables (dsight_points, dsight_samples, the name
indexes) give exactly the rows, values and types of the JSON-decoding views
they replaced (scripts/bench/sql-baseline-views.sql, installed as temporary
views over the same file), on the fixture, a small capture and mutations
(integers past 64 bits, nulls, reals with 17 digits, -0.0, odd tids); the typed columns agree with the payloads; and
a cache whose typed tables disagree with its rows is a data error."""
import copy
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
BASELINE = open(os.path.join(tap.TOP, "scripts", "bench", "sql-baseline-views.sql")).read()
VIEWS = {"nvtx": "profile, ordinal", "cpu_samples": "profile, time, source_row",
         "cpu_self": "profile, time, tid, symbol", "metric_points": "series, time, source_row"}


def cols(c, view):
    return [r[1] for r in c.execute("PRAGMA main.table_info(%s)" % view)]


def rows(c, schema, view, names):
    sel = ", ".join('typeof("%s"), "%s"' % (n, n) for n in names)
    return c.execute("SELECT %s FROM %s.%s ORDER BY %s" %
                     (sel, schema, view, VIEWS[view])).fetchall()


def same(a, b):
    """Rows equal, a sum or an average of reals within rounding: the
    aggregate adds the same values in another order when the plan loops
    over the names first."""
    return len(a) == len(b) and all(
        x == y or (type(x) is float and type(y) is float and
                   math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-300))
        for x, y in zip(a, b))


def compare(label, rep):
    db = os.path.join(rep, "trace-data.sqlite")
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    c.executescript(BASELINE)
    for view in VIEWS:
        names = cols(c, view)
        new, old = rows(c, "main", view, names), rows(c, "temp", view, names)
        t.ok(new == old and len(new) > 0,
             "%s: %s gives the rows of the JSON view (%d rows)" % (label, view, len(new)),
             [(a, b) for a, b in zip(new, old) if a != b][:3] or (len(new), len(old)))
    # statements through the indexes: grouped by name, filtered by name
    for sql in ("SELECT name, count(*), sum(duration), min(depth) FROM %s.nvtx GROUP BY name",
                "SELECT name, count(*), avg(value), max(value), group_concat(value_text)"
                " FROM %s.metric_points GROUP BY name",
                "SELECT series, time, value, value_text FROM %s.metric_points"
                " WHERE name = (SELECT min(name) FROM main.series)"):
        new = sorted(c.execute(sql % "main").fetchall(), key=repr)
        old = sorted(c.execute(sql % "temp").fetchall(), key=repr)
        t.ok(len(new) == len(old) and all(map(same, new, old)),
             "%s: %s" % (label, sql % "..."), (new[:2], old[:2]))
    c.close()
    return db


def mutate(doc):
    d = copy.deepcopy(doc)
    pts = [p for m in d["metrics"] for p in m["points"]]
    odd = [2 ** 70, -(2 ** 64) - 1, None, 0.1 + 0.2, -0.0, 1e300, 5e-324,
           12.0, 9007199254740993, -9223372036854775808, 9223372036854775808, 1 / 3,
           123456789.12345679, -1.5e-7]
    for k, p in enumerate(pts):
        p[1] = odd[k % len(odd)]
    for p in d["profiles"]:
        for k, e in enumerate(p["events"]):
            if k % 5 == 2:
                e[3] = "tid \"quoted\" \u00e9\u4e2d"
        cpu = p.get("cpu")
        if cpu:
            for k, s in enumerate(cpu["samples"]):
                s[1] = ["t\\1", "\u00e9", "123", "a\"b"][k % 4]
    return d


src = json.load(open(tap.FIXTURE))
compare("fixture", sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "fixture")))
mut = os.path.join(t.tmp, "mutated.json")
with open(mut, "w") as f:
    json.dump(mutate(src), f)
mrep = sl.build_report(mut, os.path.join(t.tmp, "mutated"))
mdb = compare("mutated", mrep)

small = os.path.join(t.tmp, "small.json")
r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.05", "-o", small])
t.ok(r.returncode == 0, "gen-capture medium x0.05", r.stderr)
compare("medium x0.05", sl.build_report(small, os.path.join(t.tmp, "small")))

# the typed columns agree with the payloads, row by row
c = sqlite3.connect("file:%s?mode=ro" % mdb, uri=True)
bad = c.execute(
    "SELECT count(*) FROM points p JOIN dsight_points t USING (series, ordinal)"
    " WHERE t.time IS NOT p.time OR t.value IS NOT json_extract(p.payload, '$[1]')"
    " OR typeof(t.value) <> typeof(json_extract(p.payload, '$[1]'))").fetchone()[0]
n = c.execute("SELECT (SELECT count(*) FROM points), (SELECT count(*) FROM dsight_points)").fetchone()
t.ok(bad == 0 and n[0] == n[1], "dsight_points agrees with the payloads (%d rows)" % n[0], (bad, n))
bad = c.execute(
    "SELECT count(*) FROM samples p JOIN dsight_samples t USING (profile, ordinal)"
    " WHERE t.time IS NOT p.time OR t.tid IS NOT json_extract(p.payload, '$[1]')"
    " OR t.stack IS NOT json_extract(p.payload, '$[2]')"
    " OR t.source_row IS NOT json_extract(p.payload, '$[3]')").fetchone()[0]
t.ok(bad == 0, "dsight_samples agrees with the payloads")
c.close()

# the reader's cheap check: a typed value that disagrees with its payload
alt = os.path.join(t.tmp, "altered")
shutil.copytree(mrep, alt)
c = sqlite3.connect(os.path.join(alt, "trace-data.sqlite"))
c.execute("UPDATE dsight_points SET value = value + 1 WHERE (series, ordinal) ="
          " (SELECT series, ordinal FROM dsight_points ORDER BY series DESC, ordinal DESC LIMIT 1)")
c.commit()
c.close()
r = tap.query(alt, "sql", "--sql", "SELECT count(*) FROM metric_points")
t.ok(r.returncode == 1 and "dsight_points" in r.stderr and "rebuild" in r.stderr,
     "a typed table that disagrees with its rows is a data error", r.stderr)
r = tap.query(mrep, "sql", "--sql", "SELECT count(*) FROM metric_points")
t.ok(r.returncode == 0, "the unaltered report answers", r.stderr)
t.done()

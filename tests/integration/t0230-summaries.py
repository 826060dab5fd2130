#!/usr/bin/env python3
"""Build-time summaries: dsight build writes them; whole-run nsys, metrics
and cpu read them (a tampered summary shows through) and answer exactly what
a scan answers (DSIGHT_NO_SUMMARIES=1), page by page; a window other than
the whole run, or a cache without summaries, scans."""
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
NOSUM = dict(os.environ, DSIGHT_NO_SUMMARIES="1")


def q(*args, env=None):
    return tap.run([DS, "query", *args], env=env)


def both(rep, *args):
    a, b = q(rep, *args), q(rep, *args, env=NOSUM)
    return a.returncode == 0 and a.stdout == b.stdout, a.stdout, b.stdout


doc = os.path.join(t.tmp, "medium.json")
r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.3", "-o", doc])
t.ok(r.returncode == 0, "capture generated", r.stderr)
for name, src in [("fixture", tap.FIXTURE), ("generated", doc)]:
    rep = sl.build_report(src, os.path.join(t.tmp, name))
    db = os.path.join(rep, "trace-data.sqlite")
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    nprof = con.execute("SELECT count(*) FROM profiles").fetchone()[0]
    nser = con.execute("SELECT count(*) FROM series").fetchone()[0]
    t.eq(con.execute("SELECT count(*) FROM dsight_summary_profiles").fetchone()[0], nprof,
         "%s: one summary row per profile" % name)
    events = con.execute("SELECT count(*) FROM events e, catalog c WHERE e.start <= "
                         "json_extract(c.json, '$.meta.duration') AND e.end >= 0").fetchone()[0]
    t.eq(con.execute("SELECT sum(events) FROM dsight_summary_profiles").fetchone()[0], events,
         "%s: the summarised ranges are those inside the run" % name)
    t.ok(con.execute("SELECT count(*) FROM dsight_summary_series").fetchone()[0] <= nser,
         "%s: at most one summary row per series" % name)
    con.close()
    cases = [["nsys"], ["nsys", "--limit", "0"], ["nsys", "--offset", "7", "--limit", "1000"],
             ["nsys", "--profile", "0", "--limit", "3"], ["nsys", "--worker", "decode-0"],
             ["nsys", "--offset", "9990", "--limit", "20"], ["metrics"],
             ["metrics", "--limit", "1000"], ["metrics", "--offset", "2", "--limit", "3"],
             ["cpu"], ["cpu", "--limit", "0"], ["cpu", "--worker", "frontend"],
             ["nsys", "--from", "1", "--to", "2"], ["metrics", "--from", "0", "--to", "5"]]
    for args in cases:
        same, a, b = both(rep, *args)
        t.ok(same, "%s: %s answers the same with and without summaries" % (name, " ".join(args)),
             "with: %s\nwithout: %s" % (a[:300], b[:300]))
    # through a warm session started without summaries
    s = sl.Server(rep, "--path", os.path.join(t.tmp, name + ".sock"), env=NOSUM)
    r = tap.run([DS, "query", "--remote", s.path, "metrics"])
    t.ok(r.returncode == 0 and r.stdout == q(rep, "metrics").stdout,
         "%s: a session without summaries answers like one with them" % name, r.stderr)
    s.stop()

# the summaries are read: a tampered copy shows the tampered figures, and
# DSIGHT_NO_SUMMARIES=1 does not
rep = os.path.join(t.tmp, "fixture")
tam = os.path.join(t.tmp, "tampered.sqlite")
shutil.copy(os.path.join(rep, "trace-data.sqlite"), tam)
con = sqlite3.connect(tam)
con.execute("UPDATE dsight_summary_series SET samples = 4242, min = '-7' WHERE series = 0")
con.execute("UPDATE dsight_summary_profiles SET events = events + 1000 WHERE profile = 0")
con.execute("UPDATE dsight_summary_stacks SET samples = samples + 500")
con.commit()
con.close()
m = json.loads(q(tam, "metrics").stdout)["items"][0]
t.ok(m["samples"] == 4242 and m["min"] == -7, "whole-run metrics read the series summary", m)
m = json.loads(q(tam, "metrics", env=NOSUM).stdout)["items"][0]
t.ok(m["samples"] != 4242, "DSIGHT_NO_SUMMARIES=1 scans instead", m)
n1 = json.loads(q(tam, "nsys", "--limit", "0").stdout)["total"]
n0 = json.loads(q(tam, "nsys", "--limit", "0", env=NOSUM).stdout)["total"]
t.eq(n1 - n0, 1000, "whole-run nsys totals come from the profile summary")
t.eq(json.loads(q(tam, "nsys", "--from", "0", "--to", "11.5", "--limit", "0").stdout)["total"],
     json.loads(q(tam, "nsys", "--from", "0", "--to", "11.5", "--limit", "0", env=NOSUM)
                .stdout)["total"], "another window scans")
c1 = json.loads(q(tam, "cpu").stdout)["items"][0]["samples"]
c0 = json.loads(q(tam, "cpu", env=NOSUM).stdout)["items"][0]["samples"]
t.ok(c1 >= c0 + 500, "whole-run cpu reads the stack summary (%d vs %d)" % (c1, c0))

# a cache without summaries (another builder's) scans
bare = os.path.join(t.tmp, "bare.sqlite")
shutil.copy(os.path.join(rep, "trace-data.sqlite"), bare)
con = sqlite3.connect(bare)
for tb in ["meta", "profiles", "stacks", "series"]:
    con.execute("DROP TABLE dsight_summary_%s" % tb)
con.commit()
con.close()
for kind in ["nsys", "metrics", "cpu"]:
    t.eq(q(bare, kind).stdout, q(rep, kind).stdout, "a cache without summaries: %s scans" % kind)
sys.exit(t.done())

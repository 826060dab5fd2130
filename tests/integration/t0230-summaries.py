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
    t.eq(con.execute("SELECT sum(count) FROM dsight_summary_names n WHERE EXISTS (SELECT 1 "
                     "FROM dsight_summary_name_profiles p WHERE p.profile = n.profile)")
         .fetchone()[0],
         con.execute("SELECT sum(s.events) FROM dsight_summary_profiles s JOIN "
                     "dsight_summary_name_profiles p USING (profile)").fetchone()[0],
         "%s: the name summaries count the ranges inside the run" % name)
    t.ok(con.execute("SELECT count(*) FROM dsight_summary_name_profiles").fetchone()[0] > 0,
         "%s: some profiles have name summaries" % name)
    t.ok(con.execute("SELECT count(*) FROM dsight_summary_series").fetchone()[0] <= nser,
         "%s: at most one summary row per series" % name)
    con.close()
    cases = [["nsys"], ["nsys", "--limit", "0"], ["nsys", "--offset", "7", "--limit", "1000"],
             ["nsys", "--profile", "0", "--limit", "3"], ["nsys", "--worker", "decode-0"],
             ["nsys", "--offset", "9990", "--limit", "20"], ["metrics"],
             ["metrics", "--limit", "1000"], ["metrics", "--offset", "2", "--limit", "3"],
             ["cpu"], ["cpu", "--limit", "0"], ["cpu", "--worker", "frontend"],
             ["nsys", "--from", "1", "--to", "2"], ["metrics", "--from", "0", "--to", "5"],
             ["nsys", "--group-by", "name"], ["nsys", "--group-by", "name", "--limit", "1000"],
             ["nsys", "--group-by", "name", "--sort", "-duration_max,key", "--offset", "2"],
             ["nsys", "--group-by", "name", "--sort", "duration_mean", "--limit", "1000"],
             ["nsys", "--group-by", "name", "--name", "a", "--name", "e"],
             ["nsys", "--group-by", "name", "--worker", "decode-0", "--fields", "key,count"],
             ["nsys", "--group-by", "name", "--from", "0.5"],
             ["nsys", "--group-by", "name", "--from", "1", "--to", "2"],
             ["nsys", "--group-by", "name", "--from", "0.5", "--to", "7.25"],
             ["nsys", "--group-by", "name", "--from", "2", "--to", "9", "--name", "a"],
             ["nsys", "--group-by", "name", "--from", "1.999", "--to", "11.001",
              "--sort", "-duration_max", "--limit", "1000"],
             ["nsys", "--group-by", "name", "--from", "3.5", "--to", "5.5", "--profile", "1"]]
    # timelines: buckets of whole seconds from a whole second read the bins
    for of in ["nsys", "cpu", "metrics"]:
        cases += [["timeline", "--of", of, "--bucket", b, *w, *f]
                  for b, w, f in [("1", [], []), ("2", ["--from", "1"], ["--limit", "1000"]),
                                  ("10", [], ["--worker", "decode-0"]),
                                  ("1", ["--from", "2", "--to", "7.5"], ["--name", "e"]),
                                  ("3", ["--from", "0", "--to", "9"], ["--profile", "1"]),
                                  ("0.5", [], []), ("1", ["--from", "0.5"], [])]]
    cases += [["timeline", "--of", "nsys", "--group-by", "name", "--bucket", b, *w]
              for b, w in [("1", []), ("10", ["--limit", "1000"]), ("2", ["--from", "3", "--offset", "1"]),
                           ("1", ["--from", "1", "--to", "6.5", "--name", "a"])]]
    extra = []
    if name == "generated":  # 120 s: windows over 10-second bins and seconds around them
        extra = [["nsys", "--group-by", "name", "--from", f, "--to", to, "--limit", "1000"]
                 for f, to in [("0", "60"), ("3.5", "57.25"), ("9.999", "70.001"), ("10", "20"),
                               ("19.5", "41"), ("0.001", "119.999"), ("55", "119")]]
    for args in cases + extra:
        same, a, b = both(rep, *args)
        t.ok(same, "%s: %s answers the same with and without summaries" % (name, " ".join(args)),
             "with: %s\nwithout: %s" % (a[:300], b[:300]))
    # through a warm session started without summaries
    s = sl.Server(rep, "--path", os.path.join(t.tmp, name + ".sock"), env=NOSUM)
    r = tap.run([DS, "query", "--remote", s.path, "metrics"])
    t.ok(r.returncode == 0 and r.stdout == q(rep, "metrics").stdout,
         "%s: a session without summaries answers like one with them" % name, r.stderr)
    s.stop()

# the summaries are read: a copy tampered within what the rows allow (a
# summary counting more than its table holds is a data error: t0155) shows
# the tampered figures, and DSIGHT_NO_SUMMARIES=1 does not
rep = os.path.join(t.tmp, "fixture")
tam = os.path.join(t.tmp, "tampered.sqlite")
shutil.copy(os.path.join(rep, "trace-data.sqlite"), tam)
con = sqlite3.connect(tam)
con.execute("UPDATE dsight_summary_series SET samples = samples - 1, min = '-7' WHERE series = 0")
con.execute("UPDATE dsight_summary_profiles SET events = events - 1 WHERE profile = 0")
# one sample moved from the profile's last stack to its first: the same total
con.execute("UPDATE dsight_summary_stacks SET samples = samples + 1 WHERE profile = 1 AND "
            "stack = (SELECT min(stack) FROM dsight_summary_stacks WHERE profile = 1)")
con.execute("UPDATE dsight_summary_stacks SET samples = samples - 1 WHERE profile = 1 AND "
            "stack = (SELECT max(stack) FROM dsight_summary_stacks WHERE profile = 1)")
series0 = json.loads(q(rep, "metrics").stdout)["items"][0]["samples"]
con.execute("UPDATE dsight_summary_names SET count = count + 77, duration_max = 1e6")
# (the fixture's bin 2 of profile 0 holds a contained range, sampling_prep,
# and its bin 9 another. The contained counts plus the crossing rows must
# still equal the profile's ranges, and no bin counts 0 (store_bincheck),
# so bin 9's range moves to bin 2 rather than one appearing)
for tb in ("dsight_summary_bins", "dsight_summary_range_bins"):
    con.execute("UPDATE %s SET count = count + 1 WHERE bin = 2" % tb)
    con.execute("DELETE FROM %s WHERE profile = 0 AND width = 1.0 AND bin = 9" % tb)
con.execute("UPDATE dsight_summary_sample_bins SET samples = samples + 5000 WHERE bin = 1")
con.execute("UPDATE dsight_summary_point_bins SET samples = samples + 7000, min = -1e9 "
            "WHERE bin = 2")
con.commit()
con.close()
m = json.loads(q(tam, "metrics").stdout)["items"][0]
t.ok(m["samples"] == series0 - 1 and m["min"] == -7, "whole-run metrics read the series summary",
     m)
m = json.loads(q(tam, "metrics", env=NOSUM).stdout)["items"][0]
t.ok(m["samples"] == series0, "DSIGHT_NO_SUMMARIES=1 scans instead", m)
n1 = json.loads(q(tam, "nsys", "--limit", "0").stdout)["total"]
n0 = json.loads(q(tam, "nsys", "--limit", "0", env=NOSUM).stdout)["total"]
t.eq(n1 - n0, -1, "whole-run nsys totals come from the profile summary")
t.eq(json.loads(q(tam, "nsys", "--from", "0", "--to", "11.5", "--limit", "0").stdout)["total"],
     json.loads(q(tam, "nsys", "--from", "0", "--to", "11.5", "--limit", "0", env=NOSUM)
                .stdout)["total"], "another window scans")
c1 = q(tam, "cpu", "--profile", "1").stdout
c0 = q(tam, "cpu", "--profile", "1", env=NOSUM).stdout
t.ok(c1 != c0 and c0 == q(rep, "cpu", "--profile", "1").stdout,
     "whole-run cpu reads the stack summary", c1 + c0)

g1 = json.loads(q(tam, "nsys", "--group-by", "name", "--limit", "0").stdout)["total"]
g0 = json.loads(q(tam, "nsys", "--group-by", "name", "--limit", "0", env=NOSUM).stdout)["total"]
t.ok(g1 > g0 and (g1 - g0) % 77 == 0, "whole-run group-by name reads the name summaries (%d vs %d)"
     % (g1, g0))
m = json.loads(q(tam, "nsys", "--group-by", "name", "--limit", "1").stdout)["items"][0]
t.eq(m["duration_max"], 1e6, "the tampered maximum shows through")
b1 = json.loads(q(tam, "nsys", "--group-by", "name", "--from", "1.5", "--to", "3.5",
                "--limit", "0").stdout)["total"]
b0 = json.loads(q(tam, "nsys", "--group-by", "name", "--from", "1.5", "--to", "3.5",
                "--limit", "0", env=NOSUM).stdout)["total"]
t.ok(b1 > b0, "a window with whole bins reads the bin summaries "
     "(%d vs %d)" % (b1, b0))
t.eq(q(tam, "nsys", "--group-by", "name", "--from", "0.5", "--to", "0.9").stdout,
     q(tam, "nsys", "--group-by", "name", "--from", "0.5", "--to", "0.9", env=NOSUM).stdout,
     "a window without a whole bin scans")

def tl(db, of, *args, env=None):
    r = q(db, "timeline", "--of", of, "--bucket", "1", "--limit", "1000", *args, env=env)
    return json.loads(r.stdout)["series"]


def col(series, key):
    """Every series' values of key, bucket by bucket (a bin summary read
    shows as a bucket that differs from the scan)."""
    return [x if x is not None else 0 for s in series for x in s["values"][key]]


for of, key, more, args in [("nsys", "overlapping", 1, []), ("cpu", "samples", 5000, []),
                            ("metrics", "samples", 7000, []),
                            ("nsys", "overlapping", 1, ["--name", "sampling_p"]),
                            ("nsys", "overlapping", 1, ["--group-by", "name"])]:
    a, b = col(tl(tam, of, *args), key), col(tl(tam, of, *args, env=NOSUM), key)
    t.ok(len(a) == len(b) and any(x - y > 0 and (x - y) % more == 0 for x, y in zip(a, b)),
         "timeline --of %s %s reads the bins (%s vs %s)" % (of, " ".join(args), a[:4], b[:4]))
    a = col(tl(tam, of, "--bucket", "0.5", *args), key)
    b = col(tl(tam, of, "--bucket", "0.5", *args, env=NOSUM), key)
    t.eq(a, b, "timeline --of %s at half seconds scans" % of)
m = tl(tam, "metrics")[0]["values"]["min"]
t.eq(m[2], -1e9, "the tampered point bin minimum shows through")
con = sqlite3.connect(tam)
con.execute("UPDATE dsight_summary_point_bins SET sum_parts = x'01'")
con.commit()
con.close()
r = q(tam, "timeline", "--of", "metrics", "--bucket", "1")
t.ok(r.returncode != 0 and "malformed" in r.stderr, "a malformed point bin is an error", r.stderr)
con = sqlite3.connect(tam)
con.execute("UPDATE dsight_summary_names SET duration_parts = x'0102'")
con.commit()
con.close()
r = q(tam, "nsys", "--group-by", "name")
t.ok(r.returncode != 0 and "malformed" in r.stderr, "a malformed name summary is an error", r.stderr)

# a cache without summaries (another builder's) scans
bare = os.path.join(t.tmp, "bare.sqlite")
shutil.copy(os.path.join(rep, "trace-data.sqlite"), bare)
con = sqlite3.connect(bare)
for tb in ["meta", "profiles", "stacks", "series", "names", "name_profiles", "bins",
           "bin_profiles", "crossing", "range_bins", "sample_bins", "sample_bin_profiles",
           "point_bins", "point_bin_series"]:
    con.execute("DROP TABLE dsight_summary_%s" % tb)
con.commit()
con.close()
for kind in ["nsys", "metrics", "cpu"]:
    t.eq(q(bare, kind).stdout, q(rep, kind).stdout, "a cache without summaries: %s scans" % kind)
    t.eq(q(bare, "timeline", "--of", kind, "--bucket", "1").stdout,
         q(rep, "timeline", "--of", kind, "--bucket", "1").stdout,
         "a cache without summaries: timeline --of %s scans" % kind)
for w in [[], ["--from", "0.5", "--to", "7.25"]]:
    t.eq(q(bare, "nsys", "--group-by", "name", *w).stdout,
         q(rep, "nsys", "--group-by", "name", *w).stdout,
         "a cache without summaries: group-by name %s scans" % " ".join(w))
sys.exit(t.done())

#!/usr/bin/env python3
"""Report mutations: a report is a file people share, so every cell of its
cache may be hostile.  The fixture is built into a report; then for every
dsight_ table, the summary tables and durations, each column is set to
null, a negative number, a huge number (2^61, 2e9) and text of the wrong
type, and rows are deleted; a fixed set of queries must give, for each
mutation, exactly the unmutated answer or a clear data error (exit 1, the
message naming the table or key), never a crash, a sanitizer report or any
other answer.  DSIGHT_TEST_LONG=1 runs the whole matrix; otherwise a
fixed sample of it (DSIGHT_TEST_SEED=N picks another) besides the cases
named in the issue.  The mutations the cheap checks cannot see (a copied
column changed while the row's json keeps its value, a crossing-range
summary row moved or deleted) are printed as known gaps, never allowed to
crash.  Also: the counts read from dsight_meta are
never buffer sizes (count.requests below the rows, 2^61), a row's
span_count never sizes an allocation, clear errors for a trace-data.sqlite
that is a FIFO or a link to /dev/urandom, lifecycle without --request, and a
session serving a mutated copy keeps serving after the bad query."""
import concurrent.futures
import json
import os
import random
import shutil
import sqlite3
import stat
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
# The whole matrix (1,412 mutations) takes about 10 minutes on the plain
# build and would take most of an hour on the sanitizer build: there the
# full tier runs the fixed sample too.
LONG = (os.environ.get("DSIGHT_TEST_LONG") == "1" and
        "asan" not in os.path.basename(tap.BUILD))
DS = tap.binpath("dsight")
QUERIES = [["requests"], ["requests", "--group-by", "session"],
           ["timeline", "--of", "requests", "--bucket", "1"],
           ["request", "--request", "req-001"], ["lifecycle", "--request", "req-001"],
           ["nsys"], ["cpu"], ["metrics"], ["timeline", "--of", "nsys", "--bucket", "1"],
           ["summary"], ["sessions"]]
HUGE = 2 ** 61
VALUES = [("null", None), ("negative", -1), ("huge", HUGE), ("2e9", 2000000000),
          ("text", "abc")]
# mutations in the short run besides the named ones (DSIGHT_TEST_SEED picks)
SHORT = 40


def q(rep, *args):
    return tap.run([DS, "query", rep, *args], timeout=120)


def crashed(r):
    return r.returncode < 0 or r.returncode >= 128 or tap.sanitizer_report(r.stderr)


def message(r):
    e = tap.err_of(r)
    err = e.get("error")
    if isinstance(err, dict):
        return str(err.get("message", ""))
    return str(err if err is not None else e.get("raw", ""))


base = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "base"))
BASEDB = os.path.join(base, "trace-data.sqlite")
want = {}
for args in QUERIES:
    r = q(base, *args)
    t.ok(r.returncode == 0, "unmutated: %s answers" % " ".join(args), r.stderr)
    want[tuple(args)] = r.stdout

con = sqlite3.connect(BASEDB)
tables = [n for (n,) in con.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'dsight%' OR "
    "name = 'durations') AND name NOT LIKE 'dsight_request_search%' ORDER BY name")]
columns = {n: [c[1] for c in con.execute("SELECT * FROM pragma_table_info(?)", (n,))]
           for n in tables}
# a row of each table: by rowid, or by primary key in a WITHOUT ROWID table
keyed = {n: [c[1] for c in sorted(con.execute("SELECT * FROM pragma_table_info(?)", (n,)),
                                  key=lambda c: c[5]) if c[5] > 0]
         for n in tables}
without_rowid = {n for (n,) in con.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID%'")}
meta_keys = {n: [k for (k,) in con.execute("SELECT key FROM %s ORDER BY key" % n)]
             for n in ("dsight_meta", "dsight_summary_meta")}
con.close()


def first_row(tb):
    """A WHERE clause selecting the first row of tb."""
    if tb not in without_rowid:
        return "rowid = (SELECT min(rowid) FROM %s)" % tb
    k = ", ".join('"%s"' % c for c in keyed[tb])
    return "(%s) IN (SELECT %s FROM %s ORDER BY %s LIMIT 1)" % (k, k, tb, k)


def mutations():
    """Every mutation: (label, names the error may carry, SQL statements)."""
    out = []
    for tb in tables:
        for key in meta_keys.get(tb, []):
            for vn, v in VALUES:
                out.append(("%s[%s]=%s" % (tb, key, vn), [tb, key],
                            [("UPDATE %s SET value = ? WHERE key = ?" % tb, (v, key))]))
            out.append(("%s[%s] deleted" % (tb, key), [tb, key],
                        [("DELETE FROM %s WHERE key = ?" % tb, (key,))]))
        if tb in meta_keys:
            continue
        for col in columns[tb]:
            for vn, v in VALUES:
                out.append(("%s.%s=%s (first row)" % (tb, col, vn), [tb],
                            [('UPDATE %s SET "%s" = ? WHERE %s' % (tb, col, first_row(tb)),
                              (v,))]))
                out.append(("%s.%s=%s (all rows)" % (tb, col, vn), [tb],
                            [('UPDATE %s SET "%s" = ?' % (tb, col), (v,))]))
        out.append(("%s: first row deleted" % tb, [tb],
                    [("DELETE FROM %s WHERE %s" % (tb, first_row(tb)), ())]))
        out.append(("%s: all rows deleted" % tb, [tb], [("DELETE FROM %s" % tb, ())]))
    return out


# The cases the issue names, always run; the short run adds a fixed sample.
NAMED = ["dsight_meta[count.requests]=huge", "dsight_meta[count.requests]=text",
         "dsight_meta[count.requests]=negative", "dsight_meta[timed.requests]=2e9",
         "dsight_requests.span_count=2e9 (first row)",
         "dsight_requests.span_count=negative (first row)",
         "dsight_requests.json=text (first row)", "dsight_requests.json=negative (first row)",
         "dsight_summary_profiles.events=huge (all rows)",
         "dsight_summary_profiles.samples=negative (first row)",
         "durations: all rows deleted"]


def chosen(ms):
    if LONG:
        return ms
    named = [m for m in ms if m[0] in NAMED]
    rest = [m for m in ms if m[0] not in NAMED]
    rng = random.Random(int(os.environ.get("DSIGHT_TEST_SEED", "155")))
    return named + rng.sample(rest, min(len(rest), SHORT))


# What the cheap checks cannot see (doc/report-files.md, "Data errors"): an
# indexed column of a collection table changed while its json keeps the old
# value moves the row in or out of a SQL filter, sort or id lookup; a row of
# a per-bin summary moved to another profile, width or bin, or deleted (and
# a crossing range's end moved within reach of its bin, a range bin's
# duration parts emptied); a series' min or max moved to another value the
# rest of its row allows; a stack summary moved to a stack the profile does
# not have (the scan ignores such stacks too).  Such a mutation may change
# an answer; it is printed as a known gap, and must never crash.
COPIED = {"dsight_requests", "dsight_sessions", "dsight_server_spans", "dsight_iterations"}
BINNED = {"dsight_summary_crossing", "dsight_summary_range_bins", "dsight_summary_bins",
          "dsight_summary_sample_bins", "dsight_summary_point_bins"}
KEYS = {"profile", "series", "width", "bin"}


def known_gap(label):
    tb, _, rest = label.partition(".")
    col = rest.split("=")[0]
    if tb in COPIED and rest and col not in ("ordinal", "json", "span_count", "search"):
        return True
    binned = tb.split(":")[0]
    if binned in BINNED and (col in KEYS or "deleted" in label):
        return True
    return (tb == "dsight_summary_crossing" and col == "end") or \
        (tb == "dsight_summary_range_bins" and col == "duration_parts") or \
        (tb == "dsight_summary_series" and col in ("min", "max")) or \
        (tb == "dsight_summary_stacks" and col == "stack")


def mutate(path, stmts):
    con = sqlite3.connect(path)
    try:
        for sql, args in stmts:
            con.execute(sql, args)
        con.commit()
        return None
    except sqlite3.Error as e:  # a constraint refuses the value: nothing to test
        return str(e)
    finally:
        con.close()


def judge(label, names, args, r):
    """None when r is the unmutated answer or a clear data error."""
    if crashed(r):
        return "crash (exit %d): %s" % (r.returncode, r.stderr[-1500:])
    if r.returncode == 0:
        if r.stdout == want[tuple(args)]:
            return None
        return "a different answer:\n  got:  %s\n  want: %s" % (r.stdout[:600],
                                                              want[tuple(args)][:600])
    msg = message(r)
    if r.returncode == 1 and any(n in msg for n in names):
        return None
    return "unclear error (exit %d): %s" % (r.returncode, r.stderr[:600])


def run_one(m, idx):
    label, names, stmts = m
    d = os.path.join(t.tmp, "m%d" % idx)
    os.mkdir(d)
    # the report's files beside the cache are shared read-only: link them
    for n in os.listdir(base):
        if n != "trace-data.sqlite":
            os.symlink(os.path.join(base, n), os.path.join(d, n))
    db = os.path.join(d, "trace-data.sqlite")
    shutil.copy(BASEDB, db)
    refused = mutate(db, stmts)
    if refused and "constraint" not in refused and "datatype mismatch" not in refused:
        return label, None, ["the mutation did not apply: " + refused]
    bad = []
    if refused is None:
        for args in QUERIES:
            why = judge(label, names, args, q(d, *args))
            if why:
                bad.append("%s: %s" % (" ".join(args), why))
    shutil.rmtree(d, ignore_errors=True)
    return label, refused, bad


ms = chosen(mutations())
start = time.time()
failed = gaps = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
    for label, refused, bad in pool.map(run_one, ms, range(len(ms))):
        if refused:
            continue
        crash = [b for b in bad if "crash" in b]
        if bad and known_gap(label) and not crash:
            gaps += 1
            print("# known gap: %s: %s" % (label, bad[0].splitlines()[0][:200]))
            continue
        if bad:
            failed += 1
        t.ok(not bad, "mutation %s: the same answers or a data error naming it" % label,
             "\n".join(bad))
t.ok(True, "%d mutations (%s run) in %.1f s: %d failed, %d known gaps" %
     (len(ms), "long" if LONG else "short", time.time() - start, failed, gaps))

# A session serving a mutated copy: the bad query is a data error, and the
# session answers the next one.
def copy_of(name, stmts):
    d = os.path.join(t.tmp, name)
    shutil.copytree(base, d)
    t.ok(mutate(os.path.join(d, "trace-data.sqlite"), stmts) is None, "%s: mutated" % name)
    return d


for name, stmts, bad in [
        ("span-count", [("UPDATE dsight_requests SET span_count = 2000000000 WHERE ordinal = 0", ())],
         ["requests", "--limit", "1"]),
        ("summary-events", [("UPDATE dsight_summary_profiles SET events = ?", (HUGE,))], ["nsys"]),
        ("count-requests", [("UPDATE dsight_meta SET value = '2' WHERE key = 'count.requests'", ())],
         ["requests", "--group-by", "session"])]:
    d = copy_of(name, stmts)
    sock = os.path.join(t.tmp, name + ".sock")
    srv = sl.Server(d, "--path", sock, "--idle-timeout", "60")
    r = tap.run([DS, "query", "--remote", sock, *bad])
    if r.returncode == 3 and srv.stderr_text(timeout=20) is not None:
        # refusing to serve a report whose counts do not hold is clear too
        err = srv.stderr_text()
        t.ok(srv.proc.returncode == 1 and "dsight_meta" in err,
             "%s: the session refuses the report with a data error" % name, err)
        srv.check(t, expect_rc=1)
        continue
    t.ok(r.returncode == 1 and not crashed(r), "%s --remote: %s is a data error" %
         (name, " ".join(bad)), "rc=%d %s" % (r.returncode, r.stderr))
    r = tap.run([DS, "query", "--remote", sock, "summary"])
    t.ok(r.returncode == 0 and r.stdout == want[("summary",)],
         "%s --remote: the session answers the next query" % name, r.stderr)
    srv.check(t)

# Unclear errors: lifecycle without --request; a trace-data.sqlite that is
# a FIFO or a link to a device is named as not a regular file.
r = q(base, "lifecycle")
t.ok(r.returncode == 2 and "requires a request id" in message(r),
     "lifecycle without --request is a usage error saying so", r.stderr)
for name, make in [("fifo", lambda p: os.mkfifo(p)),
                   ("urandom", lambda p: os.symlink("/dev/urandom", p))]:
    d = os.path.join(t.tmp, name)
    os.mkdir(d)
    make(os.path.join(d, "trace-data.sqlite"))
    r = q(d, "summary")
    t.ok(r.returncode == 1 and "trace-data.sqlite is not a regular file" in message(r),
         "a trace-data.sqlite that is a %s is named as not a regular file" % name, r.stderr)
sys.exit(t.done())

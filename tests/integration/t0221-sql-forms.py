#!/usr/bin/env python3
"""The input forms and output forms of the sql kind: --sql - (stdin, read
only then), --sql-file FILE (at most 1 MiB, UTF-8, no NUL), --max-rows N
(0..1,000,000) and --format json|jsonl|csv|tsv; each checked locally and
through a warm session, where the answer is byte-identical."""
import csv
import io
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
q = tap.query
err_of = tap.err_of
MIB = 1 << 20

rep = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))


def sqlq(*args, stdin_text=None, target=None):
    """dsight query REPORT sql ARGS (target: ["--remote", sock] instead);
    stdout is decoded without translating line ends (csv ends with CRLF)."""
    cmd = [DS, "query"] + (target or [rep]) + ["sql"] + list(args)
    kw = {"stdin": subprocess.DEVNULL} if stdin_text is None else {"input": stdin_text.encode()}
    r = tap.run(cmd, text=False, **kw)
    r.stdout = r.stdout.decode()
    r.stderr = r.stderr.decode(errors="replace")
    return r


def write(name, data):
    p = os.path.join(t.tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def usage(r, msg, name):
    t.ok(r.returncode == 2 and err_of(r).get("error") == msg, name,
         (r.returncode, r.stderr[:300]))


STMT = "SELECT id, ttft_ms FROM requests ORDER BY ttft_ms DESC LIMIT 3"
base = sqlq("--sql", STMT)
t.ok(base.returncode == 0 and json.loads(base.stdout)["row_count"] == 3, "--sql answers", base.stderr)

# ---- --sql - and --sql-file ----
r = sqlq("--sql", "-", stdin_text=STMT + "\n")
t.ok(r.returncode == 0 and r.stdout == base.stdout, "--sql - reads the statement from stdin", r.stderr)
r = sqlq("--sql=-", stdin_text=STMT)
t.ok(r.returncode == 0 and r.stdout == base.stdout, "--sql=- too", r.stderr)
rfd, wfd = os.pipe()  # stdin that never ends: reading it would hang
try:
    r = tap.run([DS, "query", rep, "sql", "--sql", STMT], stdin=rfd, timeout=60)
    t.ok(r.returncode == 0 and r.stdout == base.stdout, "stdin is not read without --sql -")
    r = tap.run([DS, "query", rep, "summary", "--sql", "-"], stdin=rfd, timeout=60)
    t.ok(r.returncode == 0, "nor for a kind that ignores --sql", r.stderr)
finally:
    os.close(rfd)
    os.close(wfd)
f = write("q.sql", ("-- the slowest first\n" + STMT + ";\n").encode())
r = sqlq("--sql-file", f)
t.ok(r.returncode == 0 and r.stdout == base.stdout, "--sql-file reads the statement", r.stderr)
r = sqlq("--sql-file=" + write("bom.sql", b"\xef\xbb\xbf" + STMT.encode()))
t.ok(r.returncode == 0 and r.stdout == base.stdout, "a leading byte-order mark is dropped", r.stderr)
exact = write("exact.sql", (b"SELECT 1" + b" " * MIB)[:MIB])
r = sqlq("--sql-file", exact)
t.ok(r.returncode == 0 and json.loads(r.stdout)["rows"] == [[1]], "a 1 MiB statement runs", r.stderr)
big = write("big.sql", (b"SELECT 1" + b" " * MIB)[:MIB + 1])
usage(sqlq("--sql-file", big), "The statement of --sql-file %s is longer than 1 MiB "
      "(1048576 bytes), the most sql takes" % big, "--sql-file: one byte past 1 MiB")
usage(sqlq("--sql", "-", stdin_text="SELECT 1" + " " * (4 * MIB)),
      "The statement of --sql - (standard input) is longer than 1 MiB (1048576 bytes), "
      "the most sql takes", "--sql -: past 1 MiB")
bad = write("latin1.sql", "SELECT 'caf\xe9'".encode("latin-1"))
usage(sqlq("--sql-file", bad), "The statement of --sql-file %s is not UTF-8 text: it holds "
      "a truncated character" % bad, "--sql-file: not UTF-8")
nul = write("nul.sql", b"SELECT 1\0; DELETE FROM events")
usage(sqlq("--sql-file", nul), "The statement of --sql-file %s holds a NUL byte (at byte 8)"
      % nul, "--sql-file: a NUL byte")
missing = os.path.join(t.tmp, "missing.sql")
usage(sqlq("--sql-file", missing), "The statement of --sql-file %s cannot be read: No such "
      "file or directory" % missing, "--sql-file: a missing file")
usage(sqlq("--sql-file", t.tmp), "The statement of --sql-file %s cannot be read: Is a "
      "directory" % t.tmp, "--sql-file: a directory")
usage(sqlq("--sql", "SELECT 1", "--sql-file", f),
      "Give the statement once: --sql or --sql-file, not both", "--sql and --sql-file")
usage(sqlq("--sql-file", write("empty.sql", b"  -- nothing\n")), "sql needs --sql STATEMENT",
      "an empty file")
usage(sqlq("--sql-file"), "--sql-file needs a value", "--sql-file without a value")
usage(sqlq("--sql-file", write("two.sql", b"SELECT 1; SELECT 2")), "Give one SQL statement",
      "a file holds one statement")

# ---- --max-rows ----
GEN = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT %d) SELECT x FROM c"
d = json.loads(sqlq("--sql", GEN % 10001).stdout)
t.ok(d["row_count"] == 10000 and d["truncated"], "the default stays 10,000 rows")
d = json.loads(sqlq("--sql", GEN % 25000, "--max-rows", "20000").stdout)
t.ok(d["row_count"] == 20000 and d["truncated"] and d["rows"][-1] == [20000], "--max-rows 20000")
d = json.loads(sqlq("--sql", GEN % 5, "--max-rows", "5").stdout)
t.ok(d["row_count"] == 5 and not d["truncated"], "exactly N rows is not truncated")
d = json.loads(sqlq("--sql", GEN % 5, "--max-rows", "0").stdout)
t.ok(d == {"columns": ["x"], "rows": [], "row_count": 0, "truncated": True},
     "--max-rows 0: the columns, and whether rows exist", d)
d = json.loads(sqlq("--sql", GEN % 1000100, "--max-rows", "1000000", "--timeout", "30").stdout)
t.ok(d["row_count"] == 1000000 and d["truncated"], "--max-rows 1000000 (small rows fit 16 MiB)")
for v in ["1000001", "-1"]:
    usage(sqlq("--sql", "SELECT 1", "--max-rows", v), "--max-rows must be >= 0 and <= 1000000",
          "--max-rows %s refused" % v)
usage(sqlq("--sql", "SELECT 1", "--max-rows", "1e3"), "--max-rows must be an integer",
      "--max-rows takes an integer")

# ---- --format ----
ODD = ("SELECT 1 AS a, 'x,y' AS \"b,c\", NULL AS c, '' AS d, 0.1 + 0.2 AS e, x'00ff' AS f, "
       "'a\"b' AS g, char(9) || 't\\' || char(10) || char(13) AS h, 1e308 * 10 AS inf, "
       "-9223372036854775808 AS i, 'Ünï' AS u")
js = sqlq("--sql", ODD)
doc = json.loads(js.stdout)
t.eq(sqlq("--sql", ODD, "--format", "json").stdout, js.stdout, "--format json is the default")
r = sqlq("--sql", ODD, "--format", "jsonl")
t.eq(r.stdout, '{"columns":["a","b,c","c","d","e","f","g","h","inf","i","u"]}\n'
     '[1,"x,y",null,"",0.30000000000000004,"00ff","a\\"b","\\tt\\\\\\n\\r",null,'
     '-9223372036854775808,"Ünï"]\n'
     '{"row_count":1,"truncated":false}\n', "jsonl: columns line, row arrays, row_count line")
t.ok(js.stdout.split('"rows":[')[1].startswith(r.stdout.splitlines()[1]),
     "jsonl rows are the JSON form's row text")
r = sqlq("--sql", ODD, "--format", "csv")
t.eq(r.stdout, 'a,"b,c",c,d,e,f,g,h,inf,i,u\r\n'
     '1,"x,y",,"",0.30000000000000004,00ff,"a""b","\tt\\\n\r",,-9223372036854775808,Ünï\r\n',
     "csv: RFC 4180 quoting, NULL empty, empty text \"\", numbers as in JSON")
rows = list(csv.reader(io.StringIO(r.stdout, newline="")))
t.eq(rows[1], ["1", "x,y", "", "", "0.30000000000000004", "00ff", 'a"b', "\tt\\\n\r", "",
               "-9223372036854775808", "Ünï"], "csv reads back with Python's csv module")
r = sqlq("--sql", ODD, "--format", "tsv")
t.eq(r.stdout, "a\tb,c\tc\td\te\tf\tg\th\tinf\ti\tu\n"
     '1\tx,y\t\\N\t\t0.30000000000000004\t00ff\ta"b\t\\tt\\\\\\n\\r\t\\N\t'
     "-9223372036854775808\tÜnï\n", "tsv: escapes, NULL as \\N")
many = "SELECT id, start FROM requests ORDER BY id"
full = json.loads(sqlq("--sql", many).stdout)
r = sqlq("--sql", many, "--format", "jsonl")
lines = [json.loads(x) for x in r.stdout.splitlines()]
t.ok(lines[0] == {"columns": full["columns"]} and lines[1:-1] == full["rows"] and
     lines[-1] == {"row_count": full["row_count"], "truncated": False},
     "jsonl equals the JSON form (%d rows)" % full["row_count"])
r = sqlq("--sql", many, "--format", "csv", "--max-rows", "2")
t.ok(r.returncode == 0 and len(r.stdout.splitlines()) == 3 and
     "truncated after 2 rows" in r.stderr, "csv: a truncated answer says so on stderr", r.stderr)
r = sqlq("--sql", many, "--format", "jsonl", "--max-rows", "2")
t.eq(r.stdout.splitlines()[-1], '{"row_count":2,"truncated":true}', "jsonl: truncated")
r = sqlq("--sql", "SELECT 1 WHERE 0", "--format", "csv")
t.eq(r.stdout, "1\r\n", "csv: no rows is the header alone")
usage(sqlq("--sql", "SELECT 1", "--format", "xml"), "--format must be json, jsonl, csv or tsv",
      "an unknown format")
usage(q(rep, "nsys", "--format", "csv"), "--format csv applies to the sql kind only",
      "--format csv on another kind")
t.ok(q(rep, "summary", "--format", "json").stdout == q(rep, "summary").stdout,
     "--format json on any kind")
usage(sqlq("--sql", "SELECT 1", "--format", "tsv", "--pretty"),
      "--pretty applies to --format json only", "--pretty with tsv")

# ---- dsight query sql --help: every view and its columns ----
import sqlite3  # noqa: E402
h = tap.run([DS, "query", "sql", "--help"])
t.ok(h.returncode == 0 and h.stdout.startswith("usage: dsight query DATASET sql"),
     "dsight query sql --help", h.stderr)
t.eq(tap.run([DS, "query", rep, "sql", "-h"]).stdout, h.stdout, "dsight query REPORT sql -h")
t.ok("dsight query sql --help" in q("--help").stdout, "dsight query --help points to it")
views, cur = {}, None
section = h.stdout.split("\nViews ")[1].split("\n\n")[0].splitlines()[1:]
for line in section:
    if not line.startswith("   "):
        cur = line.split()[0]
        views[cur] = line[20:].strip()
    else:
        views[cur] += " " + line.strip()
con = sqlite3.connect("file:%s?mode=ro" % os.path.join(rep, "trace-data.sqlite"), uri=True)
built = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'view' "
                                   "ORDER BY rowid")]
t.eq(list(views), built, "the help lists every view of a built cache, in order")
for v in built:
    cols = [r[1] for r in con.execute("PRAGMA table_info(%s)" % v)]
    if views[v].startswith("one column per key"):
        shown = views[v].split("(")[1].split(", ...)")[0].split(", ")
        t.ok(set(shown) <= set(cols), "help: %s shows some of its columns" % v, (shown, cols))
    else:
        t.eq(views[v].split(", "), cols, "help: the columns of %s" % v)
con.close()
for v in built:
    t.ok(v in q("--help").stdout, "the --sql help names the view %s" % v)

# ---- cpu_self, and a cache from before it ----
with open(tap.FIXTURE) as fh:
    evd = json.load(fh)
want = []
for pi, pr in enumerate(evd.get("profiles", [])):
    cpu = pr.get("cpu") or {}
    for smp in cpu.get("samples", []):
        stk = cpu["stacks"][smp[2]] if 0 <= smp[2] < len(cpu["stacks"]) else []
        want.append([pi, pr["worker"], smp[0], smp[1], cpu["names"][stk[0]] if stk else None])
got = json.loads(sqlq("--sql", "SELECT profile, worker, time, tid, symbol FROM cpu_self").stdout)
t.ok(sorted(got["rows"], key=repr) == sorted(want, key=repr) and want, "cpu_self: one row per sample with its leaf frame (%d)"
     % len(want), (got["rows"][:3], want[:3]))


def label(lab, k):
    v = (lab or {}).get(k)
    return v if isinstance(v, (str, int, float)) and not isinstance(v, bool) else None


hosts = {w["id"]: w.get("host") for w in evd.get("workers", []) if isinstance(w.get("host"), str)}
want = [[s_.get("id"), s_.get("name"), s_.get("worker"), s_.get("rank"),
         label(s_.get("labels"), "gpu"),
         label(s_.get("labels"), "host") or label(s_.get("labels"), "hostname") or
         hosts.get(s_.get("worker")),
         s_.get("unit"), s_.get("temporal"), s_.get("group")] for s_ in evd["metrics"]]
got = json.loads(sqlq("--sql", "SELECT * FROM metric_series").stdout)
t.ok(got["rows"] == want and got["columns"] == ["id", "name", "worker", "rank", "gpu", "host",
                                                "unit", "temporal", "family_group"],
     "metric_series: one row per series with gpu and host", (got["rows"][:2], want[:2]))
names = {}
want = []
for pi, pr in enumerate(evd.get("profiles", [])):
    for th in pr.get("threads", []):
        if isinstance(th.get("name"), str):
            names.setdefault((pi, th["global_tid"]), th["name"])
    for ev in pr.get("events", []):
        want.append([pi, ev[4], ev[3], names.get((pi, ev[3]))])
got = json.loads(sqlq("--sql", "SELECT profile, source_row, tid, thread_name FROM nvtx").stdout)
t.ok(sorted(got["rows"], key=repr) == sorted(want, key=repr) and
     any(w[3] for w in want) and any(w[3] is None for w in want),
     "nvtx.thread_name: the export's thread name, NULL where it names none", got["rows"][:3])
# nvtx.depth against its definition, on ranges with ties, identical
# ranges, partial overlaps and rows without a tid
import random  # noqa: E402
rnd = random.Random(23)
nest = json.loads(json.dumps(evd))
evs = []
for k in range(600):
    st_ = rnd.randint(0, 20) / 2
    evs.append([st_, st_ + rnd.randint(0, 8) / 2, rnd.randint(0, 1),
                rnd.choice(["1694498927", "1694498928", "None"]), 100 + k])


def contains(a, b):
    return (a[0] == b[0] and a[1] == b[1] and a[2] <= b[2] and a[3] >= b[3] and a is not b and
            not (a[2] == b[2] and a[3] == b[3] and a[4] > b[4]))


for order in ["sorted", "shuffled"]:
    if order == "sorted":
        evs.sort(key=lambda x: (x[0], -x[1]))
    else:
        rnd.shuffle(evs)  # stored order is then not containment order
    nest["profiles"][0]["events"] = evs
    nest["profiles"][0]["imported_range"] = [0.0, 14.0]
    nest_doc = write("nest-%s.json" % order, json.dumps(nest).encode())
    nrep = sl.build_report(nest_doc, os.path.join(t.tmp, "nest-" + order))
    r = tap.run([DS, "query", nrep, "sql", "--sql", "SELECT profile, tid, start, \"end\", "
                 "ordinal, depth FROM nvtx", "--max-rows", "100000"])
    rows_ = json.loads(r.stdout)["rows"]
    bad = [x for x in rows_ if x[5] != sum(contains(a, x) for a in rows_)]
    t.ok(len(rows_) >= 600 and not bad and max(x[5] for x in rows_) >= 3,
         "nvtx.depth, %s ranges: the containing ranges of the same thread (%d rows, "
         "deepest %d)" % (order, len(rows_), max(x[5] for x in rows_)), bad[:3])
old = os.path.join(t.tmp, "old.sqlite")
with open(os.path.join(rep, "trace-data.sqlite"), "rb") as src, open(old, "wb") as dst:
    dst.write(src.read())
c2 = sqlite3.connect(old)
c2.execute("DROP VIEW cpu_self")
nvtx_sql = c2.execute("SELECT sql FROM sqlite_master WHERE name = 'nvtx'").fetchone()[0]
c2.execute("DROP VIEW nvtx")
c2.execute("DROP TABLE dsight_view_threads")
c2.execute("DROP TABLE dsight_view_depth")
c2.execute(re.sub(r",\s*coalesce\(\(SELECT d\.depth .*? AS depth", "",
                  re.sub(r",\s*\(SELECT t\.name .*? AS thread_name", "", nvtx_sql)))
c2.commit()
c2.close()
usage(q(old, "sql", "--sql", "SELECT count(*) FROM cpu_self"),
      "no such table: cpu_self (the cache was built by an older dsight: run dsight build "
      "again to add this view)", "a cache without cpu_self says to rebuild")
r = q(old, "sql", "--sql", "SELECT count(*) FROM nvtx")
t.ok(r.returncode == 0, "and answers the other views", r.stderr)
usage(q(old, "sql", "--sql", "SELECT n.thread_name FROM nvtx AS n"),
      "no such column: n.thread_name (the cache was built by an older dsight: run dsight "
      "build again to add nvtx.thread_name)", "a cache without nvtx.thread_name says to rebuild")
usage(q(old, "sql", "--sql", "SELECT depth FROM nvtx"),
      "no such column: depth (the cache was built by an older dsight: run dsight "
      "build again to add nvtx.depth)", "a cache without nvtx.depth says to rebuild")
usage(q(old, "sql", "--sql", "SELECT * FROM nope"), "no such table: nope",
      "an unknown table keeps SQLite's message")

# ---- through a warm session ----
path = os.path.join(t.tmp, "forms.sock")
s = sl.Server(rep, "--path", path, "--idle-timeout", "300")
t.ok(s.alive(), "server started", s.line)
rem = ["--remote", path]
same = 0
cases = [(["--sql", ODD, "--format", fmt], None) for fmt in ["json", "jsonl", "csv", "tsv"]]
cases += [(["--sql", "-"], STMT), (["--sql-file", f], None),
          (["--sql", many, "--max-rows", "3", "--format", "csv"], None),
          (["--sql", GEN % 30000, "--max-rows", "25000"], None),
          (["--sql", ODD, "--pretty"], None)]
for args, stdin in cases:
    a = sqlq(*args, stdin_text=stdin)
    b = sqlq(*args, stdin_text=stdin, target=rem)
    ok = a.returncode == 0 and (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
    same += ok
    if not ok:
        t.ok(False, "remote equals local for %s" % args[:4], (a.stderr, b.stderr))
t.eq(same, len(cases), "every form answers byte-identically through the session")
usage(sqlq("--sql-file", big, target=rem), "The statement of --sql-file %s is longer than "
      "1 MiB (1048576 bytes), the most sql takes" % big, "remote: the client checks the size")
r = sqlq("--sql-file", exact, target=rem)
t.ok(r.returncode == 0 and json.loads(r.stdout)["rows"] == [[1]],
     "remote: a 1 MiB statement runs through the session", r.stderr)
worst = write("worst.sql", b"SELECT length('" + b"\x01" * (MIB - 40) + b"')")
r = sqlq("--sql-file", worst, target=rem)
t.ok(r.returncode == 0 and json.loads(r.stdout)["rows"] == [[MIB - 40]],
     "remote: a 1 MiB statement of control bytes (escaped six times larger) runs", r.stderr[:300])
c = sl.Conn(path, timeout=60)
rr = c.call("query", {"kind": "sql", "sql": "SELECT 1", "max_rows": 1000001})
t.ok(rr.get("error", {}).get("message") == "max_rows must be >= 0 and <= 1000000",
     "RPC: max_rows out of range", rr)
rr = c.call("query", {"kind": "sql", "sql": "SELECT 1", "max_rows": "5"})
t.ok(rr.get("error", {}).get("message") == "max_rows must be an integer or null",
     "RPC: max_rows must be an integer", rr)
rr = c.call("query", {"kind": "sql", "sql": GEN % 10, "max_rows": 4})
t.ok(rr.get("result", {}).get("data", {}).get("row_count") == 4, "RPC: max_rows", rr)
rr = c.call("query", {"kind": "sql", "sql": "SELECT 1" + " " * (MIB - 100)})
t.ok(rr.get("result", {}).get("data", {}).get("rows") == [[1]], "RPC: a long statement", str(rr)[:200])


# ---- a reader that stops early (`| head`) and a full disk ----
def piped(target):
    """Runs 200,000 rows as csv into a reader that takes 100 bytes and
    closes the pipe: (exit status, stderr)."""
    cmd = [DS, "query"] + target + ["sql", "--max-rows", "200000", "--format",
                                    "csv", "--sql", GEN % 200000]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read().decode(errors="replace")
    return p.wait(timeout=60), err


for label, target in (("local", [rep]), ("remote", rem)):
    code, err = piped(target)
    t.ok(code == 141 and err == "",
         "%s: a reader that closes the pipe early ends it quietly (141, as "
         "SIGPIPE)" % label, (code, err[:300]))
    with open("/dev/full", "wb") as full:
        r = subprocess.run([DS, "query"] + target + ["sql", "--sql", "SELECT 1"],
                           stdout=full, stderr=subprocess.PIPE, timeout=60)
    t.ok(r.returncode == 1 and err_of(r).get("error") ==
         "cannot write the response: No space left on device",
         "%s: a full disk is an error naming why" % label, r.stderr[:300])
s.stop()
sys.exit(t.done())

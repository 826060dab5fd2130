#!/usr/bin/env python3
# tests/run: tsan (threads: also run on the ThreadSanitizer build)
"""Streamed sql answers: through a session the rows of an sql answer come
in batches (`rows` notifications of at most 1 MiB, then the final reply with
row_count and truncated), and the CLI prints each batch as it comes, locally
too.  Checked here: the streamed bytes equal the unstreamed ones in every
format (the CLI locally, through the socket and over HTTP, which streams
too: t0228 checks HTTP in depth); the frames themselves; a few hundred thousand rows (a million
in the full tier) through a session in bounded client memory; the caps; a
client that stops reading or disconnects mid-stream (the daemon keeps
serving others, holds no more than a batch or two, and closes the
statement); and a statement interrupted by its time limit while another
client's queries keep their latency."""
import hashlib
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpsess as hs  # noqa: E402
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
MIB = 1 << 20
GEN = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT %d) "
       "SELECT x, x * 0.25 AS r, 'name ' || (x %% 97) AS name, "
       "CASE WHEN x %% 5 = 0 THEN NULL ELSE x END AS maybe FROM c")
FORMATS = ["json", "jsonl", "csv", "tsv"]

rep = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))
small = os.path.join(t.tmp, "small.json")
r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.2", "-o", small])
t.ok(r.returncode == 0, "a capture of 20,000 ranges generated", r.stderr)
srep = sl.build_report(small, os.path.join(t.tmp, "small"))


def cli(target, *args, timeout=120):
    """dsight query TARGET sql ARGS; bytes out, text err."""
    r = tap.run([DS, "query"] + target + ["sql"] + list(args), text=False,
                stdin=subprocess.DEVNULL, timeout=timeout)
    r.stderr = r.stderr.decode(errors="replace")
    return r


def unstreamed_data(conn, params):
    """The raw text of `data` of a one-reply answer (no stream_rows)."""
    conn.send("query", dict(params, kind="sql"))
    body = conn.recv_bytes()
    k = body.find(b',"data":')
    return body[k + 8:-2] if k >= 0 and body.endswith(b"}}") else body


def stream_frames(conn, params):
    """Every frame of a streamed answer: (bodies, the final reply)."""
    rid = conn.send("query", dict(params, kind="sql", stream_rows=True))
    frames = []
    while True:
        body = conn.recv_bytes()
        msg = json.loads(body)
        if msg.get("id") == rid:
            return frames, body, msg
        frames.append(body)


streams = sl.sql_streams
wait_for = sl.wait_until


def timed_summary(path):
    """Wall seconds of one `summary` through the session (a new client)."""
    t0 = time.monotonic()
    r = tap.run([DS, "query", "--remote", path, "summary"], timeout=60)
    return time.monotonic() - t0, r.returncode


sock = os.path.join(t.tmp, "s.sock")
s, url, token = hs.start(rep, sock, "--idle-timeout", "300")
ssock = os.path.join(t.tmp, "small.sock")
s2 = sl.Server(srep, "--path", ssock, "--idle-timeout", "300")
t.ok(s.alive() and s2.alive(), "two sessions started (the fixture with --http, the capture)")
http = url + "?token=" + token

# ---- streamed == unstreamed, every format, with and without a session ----
cases = [(rep, sock, http, ["--sql", "SELECT * FROM nvtx ORDER BY start"]),
         # every row's place fixed: a session's engine may give tied
         # counts in another order than the file's views
         (rep, sock, http, ["--sql", "SELECT name, count(*) AS n, sum(duration) FROM nvtx "
                            "GROUP BY name ORDER BY n DESC, name"]),
         (rep, sock, http, ["--sql", "SELECT x'00ff' AS b, 1e308 * 10 AS inf, 'a,\"b\"\tc\nd' AS s, "
                            "NULL AS n, '' AS e"]),
         (rep, sock, http, ["--sql", "SELECT 1 WHERE 0"]),
         (rep, sock, http, ["--sql", GEN % 30000, "--max-rows", "25000"]),
         (rep, sock, http, ["--sql", GEN % 10, "--max-rows", "0"]),
         (srep, ssock, None, ["--sql", "SELECT * FROM nvtx", "--max-rows", "1000000"]),
         (srep, ssock, None, ["--sql", "SELECT * FROM metric_points ORDER BY time, name",
                              "--max-rows", "1000000"])]
bad = []
for report, path, hurl, args in cases:
    for fmt in FORMATS:
        a = cli([report], *args, "--format", fmt)
        b = cli(["--remote", path], *args, "--format", fmt)
        if a.returncode or (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
            bad.append(("local/socket", fmt, args[1][:50], a.stderr, b.stderr))
        if hurl:
            h = cli(["--remote", hurl], *args, "--format", fmt)
            if (h.returncode, h.stdout, h.stderr) != (a.returncode, a.stdout, a.stderr):
                bad.append(("local/http", fmt, args[1][:50], h.stderr))
t.ok(not bad, "the CLI prints the same bytes locally, streamed through the socket and "
     "over HTTP, in every format (%d answers)" % (len(cases) * len(FORMATS)), bad[:3])

c = sl.Conn(sock, timeout=60)
c2 = sl.Conn(ssock, timeout=60)
bad = []
for report, path, _, args in cases:
    conn = c if path == sock else c2
    params = {"sql": args[1], "max_rows": int(args[3]) if len(args) > 3 else 10000}
    one = unstreamed_data(conn, params)
    frames, last, fin = stream_frames(conn, params)
    batches = [json.loads(f)["params"] for f in frames]
    rows = [json.dumps(row) for b in batches for row in b["rows"]]
    whole = json.loads(one)
    if (not batches or "columns" not in batches[0] or
            any("columns" in b for b in batches[1:]) or
            batches[0]["columns"] != whole["columns"] or
            rows != [json.dumps(row) for row in whole["rows"]] or
            fin["result"]["data"] != {"row_count": whole["row_count"],
                                      "truncated": whole["truncated"]} or
            any(len(f) + 4 > MIB for f in frames) or
            any(b["id"] != fin["id"] for b in batches)):
        bad.append(args[1][:60])
    a = cli([report], *args, "--format", "json")
    if a.stdout != one + b"\n":
        bad.append(("json bytes", args[1][:60]))
t.ok(not bad, "over the protocol: the batches (columns first, each frame <= 1 MiB) and the final "
     "reply carry the rows, row_count and truncated of the one-reply answer, whose bytes the "
     "CLI prints", bad)
frames, _, fin = stream_frames(c2, {"sql": "SELECT * FROM nvtx", "max_rows": 1000000})
t.ok(len(frames) >= 3 and fin["result"]["data"]["row_count"] == 20000,
     "20,000 ranges come in %d batches" % len(frames), fin)
f0 = json.loads(frames[0])["params"]
t.ok(f0.get("generation") == fin["result"]["generation"],
     "the first batch names the generation of the final reply", f0.get("generation"))
# pipelined: a streamed answer, a summary, another streamed answer, in order
reqs = [c.request("query", {"kind": "sql", "sql": GEN % 60000, "max_rows": 100000,
                            "stream_rows": True}),
        c.request("query", {"kind": "summary"}),
        c.request("query", {"kind": "sql", "sql": GEN % 3, "stream_rows": True})]
c.raw(b"".join(sl.frame(m) for m in reqs))
seen = []
while len([x for x in seen if x[0] == "reply"]) < 3:
    m = json.loads(c.recv_bytes())
    seen.append(("reply", m["id"]) if "id" in m else ("rows", m["params"]["id"]))
ids = [r["id"] for r in reqs]
order = [k for i, k in enumerate(seen) if i == 0 or k != seen[i - 1]]
t.ok(order == [("rows", ids[0]), ("reply", ids[0]), ("reply", ids[1]), ("rows", ids[2]),
               ("reply", ids[2])] and seen.count(("rows", ids[0])) >= 2,
     "pipelined requests: each answer whole and in request order, batches first", order)
rr = c.call("query", {"kind": "sql", "sql": "SELECT 1", "stream_rows": 1})
t.ok(rr.get("error", {}).get("message") == "stream_rows must be true or false",
     "stream_rows must be a boolean", rr)
rr = c.call("query", {"kind": "summary", "stream_rows": True})
t.ok("result" in rr, "stream_rows on another kind: one reply as before", str(rr)[:200])
_, _, fin = stream_frames(c, {"sql": "SELECT * FROM nope"})
t.ok(fin.get("error", {}).get("message") == "no such table: nope",
     "a refused statement is one error reply, no batch", fin)

# ---- many rows through a session, in bounded client memory ----
n = tap.matrix(1000000, 300000)
big = GEN % n
t0 = time.monotonic()
p = subprocess.Popen([DS, "query", "--remote", ssock, "sql", "--sql", big, "--max-rows", "1000000",
                      "--timeout", "30", "--format", "jsonl"], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
h = hashlib.sha256()
lines = 0
last = b""
hwm = 0  # the client's peak RSS, sampled as it prints (the rusage of a
#          child counts the image it was forked from)
for line in p.stdout:
    h.update(line)
    lines += 1
    last = line
    if lines % 10000 == 1:
        hwm = max(hwm, sl.rss_kb(p.pid, "VmHWM:"))
err = p.stderr.read().decode(errors="replace")
status = p.wait()
if tap.sanitizer_report(err):
    tap.sanitizer_reports.append(("dsight query --remote (1)", tap.sanitizer_report(err)))
rss = hwm / 1024
t.ok(status == 0 and hwm > 0 and lines == n + 2 and json.loads(last) == {"row_count": n, "truncated": False},
     "%d rows as jsonl through the session (%.1f s)" % (n, time.monotonic() - t0), err[-500:])
cap = 512 if tap.ASAN else 64
t.ok(rss < cap, "the client's peak RSS stays under %d MiB (%.0f MiB)" % (cap, rss))
a = cli([srep], "--sql", big, "--max-rows", "1000000", "--timeout", "30", "--format", "jsonl")
t.ok(a.returncode == 0 and hashlib.sha256(a.stdout).hexdigest() == h.hexdigest(),
     "and equal to the local answer", a.stderr)

# ---- caps ----
r = cli(["--remote", ssock], "--sql", GEN % 1000100, "--max-rows", "1000000", "--timeout", "30",
        "--format", "csv")
t.ok(r.returncode == 0 and r.stdout.count(b"\r\n") == 1000001 and
     "truncated after 1000000 rows" in r.stderr,
     "--max-rows 1000000 through the session: a million rows, truncated", r.stderr[-300:])
blob = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 12) "
        "SELECT x, zeroblob(1000000) FROM c")
a = cli([rep], "--sql", blob)
b = cli(["--remote", sock], "--sql", blob)
j = json.loads(a.stdout) if a.returncode == 0 else {}
t.ok(j.get("row_count") == 12 and not j.get("truncated") and a.stdout == b.stdout,
     "a streamed answer past 16 MiB is whole (12 rows of 2 MB), locally and through the session",
     (a.stderr, b.stderr))
# a new connection: the first may have been idle past the session's
# --conn-idle-timeout (60 s) while the steps above ran on a loaded machine
c.close()
c = sl.Conn(sock, timeout=60)
one = json.loads(unstreamed_data(c, {"sql": blob}))
t.ok(one.get("truncated") is True and 0 < one["row_count"] < 12,
     "the one-reply answer stays cut at 16 MiB (truncated: true)", one.get("row_count"))
frames, _, fin = stream_frames(c, {"sql": blob})
t.ok(fin["result"]["data"]["row_count"] == 12 and
     all(len(json.loads(f)["params"]["rows"]) == 1 for f in frames),
     "a row longer than a batch comes in a frame of its own", [len(f) for f in frames])
huge = "SELECT 1 AS a UNION ALL SELECT zeroblob(9000000) UNION ALL SELECT 3"
a = cli([rep], "--sql", huge)
b = cli(["--remote", sock], "--sql", huge)
j = json.loads(a.stdout) if a.returncode == 0 else {}
t.ok(j.get("rows") == [[1]] and j.get("truncated") is True and a.stdout == b.stdout,
     "a row longer than 16 MiB ends a streamed answer (truncated: true)", (a.stderr, b.stderr))

# ---- a client that stops reading, then one that disconnects ----
pid = s2.proc.pid
rss0 = sl.rss_kb(pid)
stalled = sl.Conn(ssock, timeout=60)
stalled.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
stalled.send("query", {"kind": "sql", "sql": GEN % 2000000, "max_rows": 1000000,
                       "timeout": 30, "stream_rows": True})
t.ok(wait_for(lambda: streams(ssock) == 1), "the stalled client's answer is open (status)")
worst = max(timed_summary(ssock)[0] for _ in range(5))
r = cli(["--remote", ssock], "--sql", "SELECT count(*) FROM nvtx")
t.ok(r.returncode == 0 and json.loads(r.stdout)["rows"] == [[20000]],
     "another client's sql runs while the reader stalls (the lane is free)", r.stderr)
t.ok(worst < 5, "another client's summary keeps its latency (worst of 5: %.3f s)" % worst)
grown = (sl.rss_kb(pid) - rss0) / 1024
t.ok(grown < 48, "the daemon holds a batch or two, not the answer (%.0f MiB more)" % grown)
t.ok(streams(ssock) == 1, "the stalled statement is paused, still open")
stalled.close()
t.ok(wait_for(lambda: streams(ssock) == 0),
     "a client that disconnects mid-stream: its statement is closed", streams(ssock))
# one that reads a batch, then hangs up
gone = sl.Conn(ssock, timeout=60)
gone.send("query", {"kind": "sql", "sql": GEN % 2000000, "max_rows": 1000000, "timeout": 30,
                    "stream_rows": True})
first = json.loads(gone.recv_bytes())
gone.close()
t.ok(first.get("method") == "rows" and wait_for(lambda: streams(ssock) == 0),
     "one that hangs up after the first batch: closed too")
d, rc = timed_summary(ssock)
t.ok(rc == 0 and d < 5, "the daemon keeps serving (%.3f s)" % d)

# ---- the time limit, while another client's queries keep their latency ----
runaway = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT x FROM c WHERE x % 1000000000 = 0")
p = subprocess.Popen([DS, "query", "--remote", ssock, "sql", "--sql", runaway, "--timeout", "2",
                      "--format", "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
times = []
while p.poll() is None and len(times) < 50:
    times.append(timed_summary(ssock)[0])
out, err = p.communicate(timeout=60)
err = err.decode(errors="replace")
if tap.sanitizer_report(err):
    tap.sanitizer_reports.append(("dsight query --remote (2)", tap.sanitizer_report(err)))
t.ok(p.returncode == 1 and "The statement ran longer than 2.0 s" in err and out == b"",
     "a streamed statement ends at its time limit (exit 1, no row: nothing printed)", err)
t.ok(times and max(times) < 5,
     "meanwhile %d summaries of another client kept their latency (worst %.3f s)"
     % (len(times), max(times or [0])))
rows_then = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
             "SELECT x FROM c WHERE x < 1000 OR x % 1000000000 = 0")
r = cli(["--remote", ssock], "--sql", rows_then, "--timeout", "1", "--format", "jsonl")
a = cli([srep], "--sql", rows_then, "--timeout", "1", "--format", "jsonl")
want = b'{"columns":["x"]}\n' + b"".join(b"[%d]\n" % k for k in range(1, 1000))
t.ok(r.returncode == 1 and "The statement ran longer than 1.0 s" in r.stderr and
     r.stdout == want and (a.returncode, a.stdout) == (r.returncode, r.stdout),
     "rows already computed print, then the time limit's error (locally the same)",
     (r.stderr, a.stderr, r.stdout[-100:]))
t.ok(streams(ssock) == 0, "and no streamed answer is left open")

# ---- a session reuses its sql connections: nothing of one statement
# (a refusal, the time limit, its rows) reaches the next ----
seq = [cli(["--remote", ssock], "--sql", "SELECT load_extension('x')"),
       cli(["--remote", ssock], "--sql", "SELECT * FROM no_such_view"),
       cli(["--remote", ssock], "--sql", runaway, "--timeout", "0.5"),
       cli(["--remote", ssock], "--sql", "SELECT count(*) FROM nvtx", "--format", "csv"),
       cli(["--remote", ssock], "--sql", "SELECT 1 AS one", "--format", "csv")]
t.ok([r.returncode for r in seq] == [2, 2, 1, 0, 0] and
     "sql does not allow the function load_extension()" in seq[0].stderr and
     "no such table: no_such_view" in seq[1].stderr and
     "function" not in seq[1].stderr and
     "The statement ran longer than 0.5 s" in seq[2].stderr and
     seq[3].stdout == cli([srep], "--sql", "SELECT count(*) FROM nvtx",
                          "--format", "csv").stdout and
     seq[4].stdout == b"one\r\n1\r\n",
     "one session's statements in a row: each has its own refusal, time limit and rows",
     [(r.returncode, r.stderr[-200:]) for r in seq])

# ---- the Python package: Session.sql_rows streams on the socket ----
code = r'''
import json, sys, dsight
sql = sys.argv[3]
out = {}
for addr in (sys.argv[1], sys.argv[2]):
    with dsight.connect(addr) as s:
        rows = s.sql_rows(sql, max_rows=1000000)
        got = [r for r in rows]
        one = s.query("sql", sql=sql, max_rows=1000000)
        early = s.sql_rows(sql, max_rows=1000000)
        for k, r in enumerate(early):
            if k == 5:
                break
        after = isinstance(s.query("summary"), dict)
        # rows computed before the time limit come first, then its error:
        # only an answer that streams can give them
        late, said = [], ""
        try:
            for r in s.sql_rows(sys.argv[4], timeout=1):
                late.append(r)
        except dsight.Error as exc:
            said = str(exc)
        again = isinstance(s.query("summary"), dict)
        out[addr] = [got == one["rows"], rows.columns == one["columns"],
                     rows.row_count == one["row_count"], rows.truncated == one["truncated"],
                     len(got), after, len(late), "ran longer than 1.0 s" in said, again]
print(json.dumps(out))
'''
pq = GEN % 40000
r = sl.python_with_dsight(code, ssock, http, pq, rows_then)
res = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(res.get(ssock) == [True, True, True, True, 40000, True, 999, True, True],
     "Python: Session.sql_rows yields the rows of query('sql') as they come; "
     "stopping early leaves the session usable; rows before the time limit, "
     "then its error", (res, r.stderr[-800:]))
t.ok(res.get(http) == [True, True, True, True, 40000, True, 999, True, True],
     "Python over HTTP: sql_rows streams NDJSON the same way (the rows, an early "
     "stop, the rows before the time limit and its error, the connection reused)",
     (res.get(http), r.stderr[-800:]))
t.ok(wait_for(lambda: streams(ssock) == 0), "the answer it left is closed")

c.close()
c2.close()
s.check(t)
s2.check(t)
sys.exit(t.done())

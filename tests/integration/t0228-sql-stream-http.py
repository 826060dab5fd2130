#!/usr/bin/env python3
"""Streamed sql answers over HTTP: a POST /rpc query with stream_rows from
a client that accepts application/x-ndjson is answered as a chunked NDJSON
body, one JSON-RPC message a line (the socket's frames: `rows` batches,
then the final reply or the error that ends the answer).  Checked here:
the lines carry the socket's frames (the final reply byte for byte);
other clients keep the one-body answer; `dsight query --remote http://...`
prints the same bytes as locally and through the socket in every format
on a generated capture (t0227 does the fixture), JSON one valid document;
a million rows over HTTP (300,000 wider ones under ASan) in bounded daemon
and client memory; a client that hangs up mid-body (its statement is
closed); a stalled HTTP reader while other clients' queries stay fast;
the time limit mid-stream (rows, then the error line); and a stopping
session ending a streamed body cleanly."""
import hashlib
import http.client
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
GEN = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT %d) "
       "SELECT x, x * 0.25 AS r, 'name ' || (x %% 97) AS name, "
       "CASE WHEN x %% 5 = 0 THEN NULL ELSE x END AS maybe, printf('%%060d', x) AS pad FROM c")
FORMATS = ["json", "jsonl", "csv", "tsv"]
NDJSON = "application/x-ndjson"

rep = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))
small = os.path.join(t.tmp, "small.json")
r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.2", "-o", small])
t.ok(r.returncode == 0, "a capture of 20,000 ranges generated", r.stderr)
srep = sl.build_report(small, os.path.join(t.tmp, "small"))

sock = os.path.join(t.tmp, "s.sock")
s, url, token = hs.start(rep, sock, "--idle-timeout", "300")
ssock = os.path.join(t.tmp, "small.sock")
# Under AddressSanitizer freed memory sits in its quarantine: keep it
# prompt, so the daemon's memory figures below measure the daemon.
asan = os.environ.get("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
s2, surl, stoken = hs.start(srep, ssock, "--idle-timeout", "300", env=sl.env_with(
    ASAN_OPTIONS=asan + ":quarantine_size_mb=0:allocator_release_to_os_interval_ms=10"))
t.ok(s.alive() and s2.alive() and url and surl, "two sessions with --http (the fixture, the capture)")
http = url + "?token=" + token
shttp = surl + "?token=" + stoken


def cli(target, *args, timeout=180):
    r = tap.run([DS, "query"] + target + ["sql"] + list(args), text=False,
                stdin=subprocess.DEVNULL, timeout=timeout)
    r.stderr = r.stderr.decode(errors="replace")
    return r


streams = sl.sql_streams
wait_for = sl.wait_until


def post(u, tok, msg, accept=NDJSON):
    """(status, headers, body) of one POST /rpc with Accept."""
    c = hs.Client(u, tok, timeout=120)
    try:
        return c.request("POST", "/rpc", json.dumps(msg).encode(),
                         headers={"Accept": accept} if accept else None)
    finally:
        c.close()


def socket_frames(path, msg):
    """The frames' bodies of one request through the unix socket, up to its reply."""
    conn = sl.Conn(path, timeout=120)
    try:
        conn.raw(sl.frame(msg))
        out = []
        while True:
            body = conn.recv_bytes()
            out.append(body)
            if json.loads(body).get("id") == msg["id"]:
                return out
    finally:
        conn.close()


def timed(cmd):
    t0 = time.monotonic()
    r = tap.run(cmd, timeout=60)
    return time.monotonic() - t0, r.returncode


# ---- the wire: NDJSON lines == the socket's frames ----
def batches(frames):
    """(the first batch's members but rows, every row, the final frame):
    batch boundaries follow the clock (a batch is also what 0.1 s gave)."""
    ms = [json.loads(f) for f in frames[:-1]]
    head = {k: v for k, v in ms[0]["params"].items() if k != "rows"} if ms else None
    return head, [row for m in ms for row in m["params"]["rows"]], frames[-1]


bad = []
for u, tok, path, sql, mr in [(url, token, sock, "SELECT * FROM nvtx ORDER BY start", 10000),
                              (surl, stoken, ssock, "SELECT * FROM nvtx", 1000000),
                              (url, token, sock, GEN % 50000, 100000),
                              (url, token, sock, "SELECT 1 WHERE 0", 10)]:
    msg = {"jsonrpc": "2.0", "id": 41, "method": "query",
           "params": {"kind": "sql", "sql": sql, "max_rows": mr, "stream_rows": True}}
    st, hd, body = post(u, tok, msg)
    want = socket_frames(path, msg)
    lines = body.split(b"\n")
    if (st != 200 or hd.get("content-type") != NDJSON or
            hd.get("transfer-encoding") != "chunked" or lines[-1] != b"" or len(lines) < 3 or
            any(not ln.startswith(b'{"jsonrpc":"2.0","method":"rows","params":{"id":41,')
                or len(ln) + 4 > (1 << 20) for ln in lines[:-2]) or
            batches(lines[:-1]) != batches(want)):
        bad.append((sql[:40], st, hd.get("content-type"), len(lines), len(want)))
t.ok(not bad, "stream_rows with Accept: application/x-ndjson: a chunked NDJSON body, one socket "
     "frame a line (batches of at most 1 MiB with the socket's columns and rows, then its final "
     "reply byte for byte)", bad)
frames = socket_frames(ssock, {"jsonrpc": "2.0", "id": 5, "method": "query",
                               "params": {"kind": "sql", "sql": "SELECT * FROM nvtx",
                                          "max_rows": 1000000, "stream_rows": True}})
t.ok(len(frames) >= 4, "20,000 ranges: %d lines (several batches)" % len(frames))
msg = {"jsonrpc": "2.0", "id": 3, "method": "query",
       "params": {"kind": "sql", "sql": "SELECT name FROM nvtx ORDER BY start", "stream_rows": True}}
one = {"jsonrpc": "2.0", "id": 3, "method": "query",
       "params": {"kind": "sql", "sql": "SELECT name FROM nvtx ORDER BY start"}}
want = socket_frames(sock, one)[0]
st, hd, body = post(url, token, msg, accept=None)
st2, hd2, body2 = post(url, token, msg, accept="application/json")
t.ok((st, hd.get("content-type"), body) == (200, "application/json", want) and
     (st2, hd2.get("content-type"), body2) == (200, "application/json", want),
     "a client that does not accept NDJSON (the viewer, the Python package) gets the one-body "
     "answer as before", (st, hd.get("content-type"), body[:100], st2))
st, hd, body = post(url, token, dict(msg, params={"kind": "sql", "sql": "SELECT * FROM nope",
                                                  "stream_rows": True}))
t.ok(st == 200 and hd.get("content-type") == "application/json" and
     json.loads(body)["error"]["message"] == "no such table: nope",
     "a refused statement is one JSON-RPC error body, as before", body[:200])

# ---- the CLI: the same bytes locally, through the socket and over HTTP ----
# (t0227 compares the fixture's answers over HTTP; here the capture's)
cases = [(srep, ssock, shttp, ["--sql", "SELECT * FROM nvtx", "--max-rows", "1000000"]),
         (srep, ssock, shttp, ["--sql", "SELECT * FROM metric_points ORDER BY time, name",
                               "--max-rows", "1000000"]),
         (srep, ssock, shttp, ["--sql", "SELECT name, count(*) AS n FROM nvtx GROUP BY name "
                               "ORDER BY n DESC, name"]),
         (srep, ssock, shttp, ["--sql", GEN % 30000, "--max-rows", "25000"])]
bad = []
for report, path, hurl, args in cases:
    for fmt in FORMATS:
        a = cli([report], *args, "--format", fmt)
        b = cli(["--remote", path], *args, "--format", fmt)
        h = cli(["--remote", hurl], *args, "--format", fmt)
        if a.returncode or not ((a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
                                == (h.returncode, h.stdout, h.stderr)):
            bad.append((fmt, args[1][:50], a.stderr, h.stderr))
        elif fmt == "json":
            try:
                json.loads(h.stdout)
            except ValueError:
                bad.append(("json not one document", args[1][:50]))
t.ok(not bad, "dsight query --remote http://...: the same bytes as locally and through the "
     "socket, in every format, on a generated capture, JSON one valid document (%d answers)" % (len(cases) * 4), bad[:3])

# ---- a million rows over HTTP: bounded daemon and client memory ----
# a million rows; under the sanitizers (several times slower, within the
# 30-s time limit) fewer but wider ones, still several times the bound
N = 300000 if tap.ASAN else 1000000
big = (GEN % N).replace("'%060d'", "'%0250d'" if tap.ASAN else "'%060d'")
pid = s2.proc.pid
rss0 = sl.rss_kb(pid)
t0 = time.monotonic()
p = subprocess.Popen([DS, "query", "--remote", shttp, "sql", "--sql", big, "--max-rows", "1000000",
                      "--timeout", "30", "--format", "jsonl"], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
h = hashlib.sha256()
lines = nbytes = dpeak = hwm = 0
last = b""
for line in p.stdout:
    h.update(line)
    lines += 1
    nbytes += len(line)
    last = line
    if lines % 20000 == 1:
        hwm = max(hwm, sl.rss_kb(p.pid, "VmHWM:"))
        dpeak = max(dpeak, sl.rss_kb(pid))
err = p.stderr.read().decode(errors="replace")
status = p.wait()
wall = time.monotonic() - t0
if tap.sanitizer_report(err):
    tap.sanitizer_reports.append(("dsight query --remote http", tap.sanitizer_report(err)))
t.ok(status == 0 and lines == N + 2 and json.loads(last) == {"row_count": N, "truncated": False},
     "%d rows (%.0f MB) as jsonl over HTTP (%.1f s)" % (N, nbytes / 1e6, wall), err[-500:])
grown = (dpeak - rss0) / 1024
t.ok(dpeak > 0 and grown < 48 < nbytes / 1048576,
     "the daemon holds a few batches, not the %.0f MB answer (%.0f MiB more at peak)"
     % (nbytes / 1e6, grown))
cap = 512 if tap.ASAN else 64
t.ok(0 < hwm / 1024 < cap, "the client's peak RSS stays under %d MiB (%.0f MiB)" % (cap, hwm / 1024))
a = cli([srep], "--sql", big, "--max-rows", "1000000", "--timeout", "30", "--format", "jsonl")
t.ok(a.returncode == 0 and hashlib.sha256(a.stdout).hexdigest() == h.hexdigest(),
     "and equal to the local answer", a.stderr)
t.ok(wait_for(lambda: streams(ssock) == 0), "no streamed answer left open")


def open_stream(u, tok, sql, rcvbuf=None):
    """A raw HTTP connection that sent a streamed query; nothing read yet."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "query",
                       "params": {"kind": "sql", "sql": sql, "max_rows": 1000000,
                                  "timeout": 30, "stream_rows": True}}).encode()
    host, port = hs.hostport(u)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    c.settimeout(60)
    c.connect((host, port))
    c.sendall(("POST /rpc HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: application/json\r\nAccept: %s\r\nContent-Length: %d\r\n\r\n"
               % (host, port, tok, NDJSON, len(body))).encode() + body)
    return c


# ---- a client that hangs up mid-body ----
c = open_stream(surl, stoken, GEN % 2000000)
got = b""
while len(got) < 300000:
    got += c.recv(65536)
t.ok(b"200 OK" in got.split(b"\r\n")[0] and b'"method":"rows"' in got and streams(ssock) == 1,
     "a reader that took 300 KB of a streamed body: its statement is open (status)")
c.close()
t.ok(wait_for(lambda: streams(ssock) == 0),
     "it hangs up mid-body: its statement is closed (sql_streams back to 0)", streams(ssock))

# ---- a stalled HTTP reader while other clients' queries stay fast ----
rss0 = sl.rss_kb(pid)
stalled = open_stream(surl, stoken, GEN % 2000000, rcvbuf=4096)
t.ok(wait_for(lambda: streams(ssock) == 1), "a stalled HTTP reader's answer is open")
time.sleep(1)
worst = max(max(timed([DS, "query", "--remote", shttp, "summary"])[0],
                timed([DS, "query", "--remote", ssock, "summary"])[0]) for _ in range(4))
r = cli(["--remote", shttp], "--sql", "SELECT count(*) FROM nvtx")
grown = (sl.rss_kb(pid) - rss0) / 1024
t.ok(r.returncode == 0 and json.loads(r.stdout)["rows"] == [[20000]] and worst < 5,
     "meanwhile another client's sql over HTTP runs, and summaries over HTTP and the socket "
     "keep their latency (worst %.3f s)" % worst, r.stderr)
t.ok(grown < 48 and streams(ssock) == 1, "the stalled statement is paused, still open, the daemon "
     "holding a batch or two for it (%.0f MiB more)" % grown)
stalled.close()
t.ok(wait_for(lambda: streams(ssock) == 0), "the stalled reader hangs up: its statement is closed")

# ---- the time limit mid-stream ----
rows_then = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
             "SELECT x FROM c WHERE x < 1000 OR x % 1000000000 = 0")
msg = {"jsonrpc": "2.0", "id": 9, "method": "query",
       "params": {"kind": "sql", "sql": rows_then, "timeout": 1, "stream_rows": True}}
st, hd, body = post(surl, stoken, msg)
ls = body.split(b"\n")
endmsg = json.loads(ls[-2]) if len(ls) >= 3 else {}
t.ok(st == 200 and hd.get("content-type") == NDJSON and ls[-1] == b"" and
     json.loads(ls[0]).get("method") == "rows" and
     endmsg.get("id") == 9 and endmsg.get("error", {}).get("code") == -32000 and
     endmsg["error"]["message"] == "The statement ran longer than 1.0 s",
     "past the time limit after rows: the 200 body ends with the JSON-RPC error line "
     "(a complete chunked body)", (st, ls[-2:] if len(ls) > 1 else body[:200]))
r = cli(["--remote", shttp], "--sql", rows_then, "--timeout", "1", "--format", "jsonl")
a = cli([srep], "--sql", rows_then, "--timeout", "1", "--format", "jsonl")
want = b'{"columns":["x"]}\n' + b"".join(b"[%d]\n" % k for k in range(1, 1000))
t.ok(r.returncode == 1 and "The statement ran longer than 1.0 s" in r.stderr and
     r.stdout == want and (a.returncode, a.stdout, a.stderr) == (r.returncode, r.stdout, r.stderr),
     "the CLI over HTTP prints the rows, then the time limit's error, exit 1 (as locally)",
     (r.stderr, a.stderr))
t.ok(streams(ssock) == 0, "and no streamed answer is left open")

# ---- a stopping session ends a streamed HTTP answer that waits for rows ----
c = open_stream(surl, stoken, rows_then)  # a first batch, then a long wait
got = b""
while b'"method":"rows"' not in got:
    b = c.recv(65536)
    if not b:
        break
    got += b
t0 = time.monotonic()
k = sl.dsight("ctl", "kill-server", ssock)
try:
    while not got.endswith(b"\r\n0\r\n\r\n"):
        b = c.recv(65536)
        if not b:
            break
        got += b
except OSError:
    pass
c.close()
sl.wait_exit(s2.proc, 60)
t.ok(k.returncode == 0 and got.endswith(b"}\n\r\n0\r\n\r\n") and b'"error":{"code":' in got[-400:] and
     s2.proc.poll() is not None and time.monotonic() - t0 < 30,
     "kill-server while an HTTP reader waits for rows: its body ends with the error line and "
     "the chunked end, the session stops (%.1f s)" % (time.monotonic() - t0), (k.stderr, got[-300:]))

s.check(t)
s2.check(t)
sys.exit(t.done())

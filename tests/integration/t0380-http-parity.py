#!/usr/bin/env python3
"""Sessions over HTTP: every RPC method answers the same bytes over HTTP as
over the unix socket (hello, status, query of every kind, errors,
notifications, shutdown), `dsight query --remote HOST:PORT` prints what
`--remote SOCKET` prints, `ctl status|url`, the Python package over HTTP,
the startup record and the token file, and the start-up refusals (a port
in use, a non-loopback host)."""
import json
import os
import shutil
import socket
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpsess as hs  # noqa: E402
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

KINDS = ["summary", "requests", "request", "lifecycle", "metrics", "profiles", "nsys", "cpu",
         "iterations", "sources", "server_spans", "sessions", "workers", "families",
         "timeline"]
PARAMS = [
    {},
    {"start": 3, "end": 4},
    {"offset": 1, "limit": 1},
    {"request_id": "req-001"},
    {"limit": 5000},              # invalid: -32602
    {"worker": "decode-0", "rank": 0, "points": True},
]
CLI = [
    ["summary"],
    ["requests", "--from", "3", "--to", "4"],
    ["request", "--request", "req-001"],
    ["nsys", "--offset", "1", "--limit", "3", "--pretty"],
    ["metrics", "--points"],
    ["timeline", "--of", "nsys", "--bucket", "1"],
    ["requests", "--limit", "1001"],
    ["nosuchkind"],
    ["sql", "--sql", "select count(*) as n from events"],
    ["requests", "--group-by", "worker"],
]
VOLATILE = {"uptime_s", "idle_s", "queries", "connections", "server_time_us", "last_query_us"}

t = tap.T()
try:
    report = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))
    sock = os.path.join(t.tmp, "s.sock")
    s, url, token = hs.start(report, sock, "--idle-timeout", "300")
    t.ok(s.alive() and url.startswith("http://127.0.0.1:") and url.endswith("/"),
         "the startup record carries http=URL", s.line)
    t.ok(s.line.index(" http=") > s.line.index(" socket-path="), "http= comes after socket-path", s.line)
    st = os.stat(sock + ".http")
    t.ok(stat.S_IMODE(st.st_mode) == 0o600 and token and len(token) == 64,
         "token file: mode 0600, one line URL TOKEN (64 hex digits)", oct(st.st_mode))
    t.ok(token not in s.line, "the token is not in the startup record")

    # --- every method, both transports, the same bytes ---
    c = hs.Client(url, token)
    u = sl.Conn(sock)
    same, diffs = 0, []
    for kind in KINDS:
        for p in PARAMS:
            params = dict(p, kind=kind)
            rid = 1000 + same + len(diffs)
            u.send("query", params, rid=rid)
            a = u.recv_bytes()
            b = c.rpc_raw("query", params, rid=rid)
            if a == b:
                same += 1
            else:
                diffs.append((params, a[:200], b[:200]))
    t.ok(not diffs, "query: %d answers byte-identical over HTTP and the socket" % same, diffs[:3])
    h1, h2 = u.call("hello", {"protocol": 1}), c.rpc("hello", {"protocol": 1})
    t.eq(h2["result"], h1["result"], "hello: the same result")
    s1, s2 = u.call("status")["result"], c.rpc("status")["result"]
    t.eq({k: v for k, v in s2.items() if k not in VOLATILE},
         {k: v for k, v in s1.items() if k not in VOLATILE}, "status: the same result")
    t.eq(s2.get("http"), url, "status names the HTTP listener")
    for label, body in (("malformed JSON", b"{nope"), ("unknown method", b'{"jsonrpc":"2.0","id":7,"method":"x"}'),
                        ("not JSON-RPC", b'[1,2]'), ("bad protocol", b'{"jsonrpc":"2.0","id":8,"method":"hello","params":{"protocol":9}}')):
        u2 = sl.Conn(sock)
        u2.raw(sl.frame(body))
        a = u2.recv_bytes()
        u2.close()
        stc, _, b = c.request("POST", "/rpc", body)
        t.ok(stc == 200 and a == b, "%s: the same error, HTTP 200" % label, (stc, a, b))
    stc, _, b = c.request("POST", "/rpc", b'{"jsonrpc":"2.0","method":"status"}')
    t.ok(stc == 204 and b == b"", "a notification: 204, no body", (stc, b))

    # --- the CLI: --remote HOST:PORT prints what --remote SOCKET prints ---
    env = sl.env_with(DSIGHT_TOKEN=token)
    hp = url[len("http://"):].rstrip("/")
    bad = []
    for args in CLI:
        a = sl.dsight("query", "--remote", sock, *args)
        for addr in (url, hp):
            b = sl.dsight("query", "--remote", addr, *args, env=env)
            if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
                bad.append((addr, args, a.returncode, b.returncode, b.stderr[:200]))
    t.ok(not bad, "dsight query --remote URL and HOST:PORT: same stdout, stderr, status (%d)" % len(CLI), bad[:3])
    b = sl.dsight("query", "--remote", url + "?token=" + token, "summary")
    a = sl.dsight("query", "--remote", sock, "summary")
    t.ok(b.returncode == 0 and b.stdout == a.stdout, "the token in the address (?token=)")
    r = sl.dsight("query", "--remote", url, "summary", env=sl.env_with(DSIGHT_TOKEN="0" * 64))
    t.ok(r.returncode == 1 and "refused the token" in r.stderr and "DSIGHT_TOKEN" in r.stderr,
         "a wrong token: exit 1, says how to give one", r.stderr)
    r = sl.dsight("query", "--remote", url, "summary", env=sl.env_with(DSIGHT_TOKEN=None))
    t.ok(r.returncode == 1 and "refused the token" in r.stderr,
         "no token (a --path session has no file in the session directory): exit 1", r.stderr)
    r = sl.dsight("ctl", "status", url, env=env)
    t.ok(r.returncode == 0 and json.loads(r.stdout)["socket_path"] == sock, "ctl status HOST:PORT", r.stderr)
    r = sl.dsight("ctl", "url", sock)
    t.ok(r.returncode == 0 and r.stdout.strip() == url + "?token=" + token, "ctl url SOCKET prints URL?token=", r.stdout)
    r = sl.dsight("ctl", "url", url, env=env)
    t.ok(r.returncode == 0 and r.stdout.strip() == url + "?token=" + token, "ctl url HOST:PORT (DSIGHT_TOKEN)", r.stdout)
    r = sl.dsight("query", "--remote", "http://127.0.0.1:%d/x" % hs.hostport(url)[1], "summary", env=env)
    t.ok(r.returncode == 2 and "no path" in r.stderr, "an address with a path: usage error", r.stderr)

    # --- Python over HTTP answers what it answers over the socket ---
    code = ("import dsight, json, sys\n"
            "a = dsight.connect(sys.argv[1]); b = dsight.connect(sys.argv[2])\n"
            "out = []\n"
            "for k in ('summary', 'requests', 'nsys', 'metrics'):\n"
            "    out.append(a.query(k) == b.query(k))\n"
            "try:\n    b.query('requests', limit=5000)\nexcept dsight.QueryError as e:\n    out.append('limit' in str(e))\n"
            "try:\n    dsight.connect('127.0.0.1:1')\nexcept dsight.NoSession as e:\n    out.append('No live session' in str(e))\n"
            "print(json.dumps(out))\n")
    r = sl.python_with_dsight(code, sock, url + "?token=" + token)
    t.ok(r.returncode == 0 and json.loads(r.stdout or "[]") == [True] * 6,
         "Python: dsight.connect(URL) answers as over the socket; errors map the same", r.stdout + r.stderr)

    # --- shutdown over HTTP ---
    stc, _, b = c.request("POST", "/rpc", b'{"jsonrpc":"2.0","id":1,"method":"shutdown"}')
    t.ok(stc == 200 and json.loads(b)["result"]["stopping"] is True, "shutdown over HTTP answers", b)
    t.ok(hs.wait_port_closed(url) and sl.wait_gone(sock), "the port closes and the socket goes")
    sl.wait_exit(s.proc, 20)
    s.check(t)
    t.ok(hs.files_gone(sock), "socket, lock and token file removed")
    c.close()
    u.close()

    # --- start-up refusals ---
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    sock2 = os.path.join(t.tmp, "busy.sock")
    p = tap.run([sl.DSIGHTD, "serve", report, "--path", sock2, "--http", str(port)], timeout=30)
    t.ok(p.returncode == 1 and "http://127.0.0.1:%d/" % port in p.stderr and "in use" in p.stderr,
         "a port in use: exit 1 naming the address", p.stderr)
    t.ok(hs.files_gone(sock2) and not os.path.exists(sock2 + ".log"), "a port in use leaves nothing behind")
    busy.close()
    p = tap.run([sl.DSIGHTD, "serve", report, "--path", sock2, "--http", "192.0.2.1:0"], timeout=30)
    t.ok(p.returncode == 2 and "not a loopback" in p.stderr and "ssh -L" in p.stderr,
         "a non-loopback host needs --allow-remote", p.stderr)
    p = tap.run([sl.DSIGHTD, "serve", report, "--path", sock2, "--allow-remote"], timeout=30)
    t.ok(p.returncode == 2 and "--http" in p.stderr, "--allow-remote alone is a usage error", p.stderr)
    for spec in ("x", "70000", "[::1", "a:b:1", "-1"):
        p = tap.run([sl.DSIGHTD, "serve", report, "--path", sock2, "--http", spec], timeout=30)
        t.ok(p.returncode == 2 and "--http" in p.stderr, "--http %s: usage error" % spec, p.stderr)
    s6 = sl.Server(report, "--path", os.path.join(t.tmp, "v6.sock"), "--http", "[::1]:0")
    if s6.alive():
        u6 = s6.record.get("http", "")
        tok6 = open(os.path.join(t.tmp, "v6.sock.http")).read().split()[1]
        r6 = hs.Client(u6, tok6).rpc("hello")
        t.ok(u6.startswith("http://[::1]:") and "result" in r6, "--http [::1]:0 serves IPv6 loopback", u6)
        s6.check(t)
    else:
        s6.check(t, expect_rc=1)
        t.skip("--http [::1]:0", "no IPv6 loopback on this machine")
    shutil.rmtree(os.path.join(t.tmp, "report"), ignore_errors=True)
except Exception as exc:  # noqa: BLE001
    t.ok(False, "unexpected exception", repr(exc))
finally:
    sl.cleanup(t)
sys.exit(t.done())

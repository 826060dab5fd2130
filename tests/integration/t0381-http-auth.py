#!/usr/bin/env python3
"""Sessions over HTTP: the token, Host and Origin rules (each refusal and
each acceptance), the cookie a browser gets from /?token=, the endpoints
(/, /detail/<name>, 404, 405, 413, 415), gzip or not for shards, and the
page of a session without a viewer."""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpsess as hs  # noqa: E402
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

HELLO = b'{"jsonrpc":"2.0","id":1,"method":"hello"}'

t = tap.T()
try:
    report = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))
    sock = os.path.join(t.tmp, "a.sock")
    s, url, token = hs.start(report, sock, "--idle-timeout", "300")
    host, port = hs.hostport(url)
    c = hs.Client(url, token)
    anon = hs.Client(url, None)

    # --- the token ---
    st, hd, b = anon.request("POST", "/rpc", HELLO)
    t.ok(st == 401 and "no token" in json.loads(b)["error"] and "session" not in hd.get("set-cookie", ""),
         "no token: 401 naming what is missing", (st, b))
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Authorization": "Bearer " + "0" * 64})
    t.ok(st == 401 and "not valid" in json.loads(b)["error"], "a wrong token: 401", (st, b))
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Authorization": "Bearer " + token[:-1]})
    t.ok(st == 401, "a token one digit short: 401", st)
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Authorization": "Bearer " + token + "0"})
    t.ok(st == 401, "a token one digit long: 401", st)
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Authorization": "Basic " + token})
    t.ok(st == 401, "another scheme than Bearer: 401", st)
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Authorization": "Bearer " + token})
    t.ok(st == 200 and "result" in json.loads(b), "Authorization: Bearer TOKEN: accepted", (st, b))
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Cookie": "a=b; dsight_token=" + token + "; c=d"})
    t.ok(st == 200, "the dsight_token cookie: accepted", (st, b))
    st, _, b = anon.request("POST", "/rpc", HELLO, {"Cookie": "dsight_token=" + "1" * 64})
    t.ok(st == 401, "a wrong cookie: 401", st)
    st, hd, b = anon.request("GET", "/?token=" + token)
    ck = hd.get("set-cookie", "")
    t.ok(st == 303 and hd.get("location") == "/" and ("dsight_token=" + token) in ck and
         "HttpOnly" in ck and "SameSite=Strict" in ck and "Path=/" in ck,
         "/?token=TOKEN: the cookie (HttpOnly, SameSite=Strict, Path=/) and a redirect to /", (st, hd))
    st, hd, b = anon.request("GET", "/?token=" + "2" * 64)
    t.ok(st == 401 and "set-cookie" not in hd, "/?token=WRONG: 401, no cookie", st)
    st, _, _ = anon.request("GET", "/")
    t.ok(st == 401, "GET / without a token: 401", st)
    st, _, _ = anon.request("GET", "/detail/" + "a" * 64 + ".json.gz")
    t.ok(st == 401, "a shard without a token: 401", st)

    # --- Host (DNS rebinding) ---
    for h in ("evil.example:%d" % port, "127.0.0.1:%d" % (port + 1), "127.0.0.2:%d" % port, "", "localhost"):
        st, _, b = c.request("POST", "/rpc", HELLO, {"Host": h})
        t.ok(st == 403 and "Host" in json.loads(b)["error"], "Host %r: 403" % h, (st, b))
    for h in ("127.0.0.1:%d" % port, "localhost:%d" % port, "LOCALHOST:%d" % port, "[::1]:%d" % port):
        st, _, _ = c.request("POST", "/rpc", HELLO, {"Host": h})
        t.ok(st == 200, "Host %s: accepted" % h, st)
    r = hs.raw(url, b"GET / HTTP/1.0\r\nAuthorization: Bearer " + token.encode() + b"\r\n\r\n")
    t.ok(b" 403 " in r.split(b"\r\n")[0] or b" 400 " in r.split(b"\r\n")[0],
         "no Host header at all: refused", r[:80])
    # a forbidden Host is refused before the token is looked at
    st, _, _ = anon.request("POST", "/rpc", HELLO, {"Host": "evil.example:%d" % port})
    t.eq(st, 403, "a wrong Host without a token: 403 (nothing about the token)")

    # --- Origin (cross-site) ---
    for o in ("http://evil.example", "http://127.0.0.1:%d" % (port + 1), "null", "https://127.0.0.1:%d" % port,
              "http://localhost:%d" % port):
        st, _, b = c.request("POST", "/rpc", HELLO, {"Origin": o})
        t.ok(st == 403 and "Origin" in json.loads(b)["error"], "Origin %s: 403" % o, (st, b))
    st, hd, _ = c.request("POST", "/rpc", HELLO, {"Origin": "http://127.0.0.1:%d" % port})
    t.ok(st == 200 and not any(k.startswith("access-control") for k in hd),
         "the listener's own Origin: accepted; no CORS headers", (st, hd))
    st, _, _ = c.request("POST", "/rpc", HELLO, {"Origin": "http://localhost:%d" % port,
                                                 "Host": "localhost:%d" % port})
    t.eq(st, 200, "Origin equal to the Host used (localhost): accepted")

    # --- endpoints ---
    st, hd, page = c.request("GET", "/")
    gen = c.rpc("hello")["result"]["generation"]
    t.ok(st == 200 and hd.get("content-type", "").startswith("text/html") and
         ('<meta name="dsight-live" content="%s">' % gen).encode() in page[:2000] and
         hd.get("cache-control") == "no-store",
         "GET /: the viewer with the live marker of the current generation", (st, hd, page[:300]))
    static = open(os.path.join(report, "index.html"), "rb").read()
    t.eq(page.replace(('\n<meta name="dsight-live" content="%s">' % gen).encode(), b"", 1), static,
         "GET /: the report's index.html byte for byte, plus the marker")
    st, _, head = c.request("HEAD", "/")
    t.ok(st == 200 and head == b"", "HEAD /: 200 without a body", st)
    shards = sorted(os.listdir(os.path.join(report, "detail")))
    name = shards[0]
    raw_bytes = open(os.path.join(report, "detail", name), "rb").read()
    st, hd, b = c.request("GET", "/detail/" + name, headers={"Accept-Encoding": "gzip"})
    t.ok(st == 200 and hd.get("content-encoding") == "gzip" and b == raw_bytes and
         hd.get("cache-control") == "public, max-age=31536000, immutable",
         "a shard, gzip accepted: the stored bytes, Content-Encoding gzip, immutable", (st, hd))
    st, hd, b = c.request("GET", "/detail/" + name, headers={"Accept-Encoding": "identity"})
    t.ok(st == 200 and "content-encoding" not in hd and b == raw_bytes and gzip.decompress(b),
         "a shard, gzip not accepted: the gzip bytes without Content-Encoding", (st, hd))
    for path in ("/detail/" + "0" * 64 + ".json.gz", "/detail/../trace-data.sqlite", "/manifest.json",
                 "/trace-data.sqlite", "/detail/", "/parts.json", "/part-001.html", "/nope",
                 "/detail/%2e%2e/manifest.json"):
        st, _, _ = c.request("GET", path)
        t.eq(st, 404, "GET %s: 404" % path)
    st, hd, _ = c.request("GET", "/rpc")
    t.ok(st == 405 and "POST" in hd.get("allow", ""), "GET /rpc: 405, Allow: POST", (st, hd))
    st, _, _ = c.request("POST", "/", b"{}")
    t.eq(st, 405, "POST /: 405")
    st, _, b = c.request("POST", "/rpc", HELLO, {"Content-Type": "text/plain"})
    t.ok(st == 415, "POST /rpc as text/plain: 415", (st, b))
    st, _, b = c.request("POST", "/rpc", HELLO, {"Content-Type": "application/json; charset=utf-8"})
    t.eq(st, 200, "application/json; charset=utf-8: accepted")
    big = b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"x":"' + b"a" * (2 << 20) + b'"}}'
    c2 = hs.Client(url, token)
    try:
        st, _, b = c2.request("POST", "/rpc", big)
    except (ConnectionResetError, BrokenPipeError):
        st = 413  # the server may answer and close before the body is sent
    t.eq(st, 413, "a 2 MiB body: 413")
    c2.close()
    near = b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"x":"' + b"a" * ((1 << 20) - 100) + b'"}}'
    st, _, b = hs.Client(url, token).request("POST", "/rpc", near)
    t.ok(st == 200 and "result" in json.loads(b), "a body just under 1 MiB is served", st)
    st, _, b = c.request("POST", "/rpc", HELLO)
    t.eq(st, 200, "the session still serves after all of it")
    s.check(t)

    # --- a session of a file (no viewer): a page that says so; /rpc works ---
    sock2 = os.path.join(t.tmp, "doc.sock")
    s2, url2, tok2 = hs.start(os.path.join(report, "trace-data.sqlite"), sock2)
    c3 = hs.Client(url2, tok2)
    st, _, page = c3.request("GET", "/")
    t.ok(st == 200 and b"no viewer" in page.lower() and b"dsight build" in page,
         "a cache without HTML: GET / explains how to build the viewer", page[:400])
    t.ok("result" in c3.rpc("query", {"kind": "summary"}), "... and /rpc answers")
    st, _, _ = c3.request("GET", "/detail/" + name)
    t.eq(st, 404, "... and has no shards")
    s2.check(t)
except Exception as exc:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
sys.exit(t.done())

#!/usr/bin/env python3
"""Warm sessions: queries run off the event loop, so status answers and
shutdown is accepted while long queries run; shutdown lets the queries in
flight finish (their answers arrive) before the server exits."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
try:
    doc = os.path.join(t.tmp, "medium.json")
    r = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "-o", doc])
    t.ok(r.returncode == 0, "medium capture generated", r.stderr)
    path = os.path.join(t.tmp, "long.sock")
    s = sl.Server(doc, "--path", path, "--idle-timeout", "300")
    t.ok(s.alive(), "server started on the medium document", s.line)
    heavy = {"kind": "metrics", "points": True, "limit": 1000}

    # baseline: how long one heavy query takes
    c = sl.Conn(path, timeout=300)
    t0 = time.time()
    r = c.call("query", heavy)
    one = time.time() - t0
    t.ok("result" in r, "a heavy query answers (%.2fs)" % one, str(r)[:300])

    # eight heavy queries pipelined, then status on another connection
    n = 8
    t0 = time.time()
    for _ in range(n):
        c.send("query", heavy)
    time.sleep(min(0.05, one / 4))
    st = sl.Conn(path, timeout=300)
    ts = time.time()
    sr = st.call("status")
    status_s = time.time() - ts
    got = [c.recv() for _ in range(n)]
    all_s = time.time() - t0
    t.ok(all("result" in g for g in got), "all pipelined heavy queries answer")
    t.ok("result" in sr and status_s < all_s / 2,
         "status answers while long queries run (%.3fs vs %.2fs for the queries)" % (status_s, all_s))

    # a rebuild is loaded off the event loop: status answers meanwhile
    os.utime(doc)  # a new file identity: the next query reloads the document
    t0 = time.time()
    c.send("query", {"kind": "summary"})
    time.sleep(0.02)
    ts = time.time()
    sr = st.call("status")
    status_s = time.time() - ts
    qr = c.recv()
    reload_s = time.time() - t0
    t.ok("result" in qr and "result" in sr and status_s < reload_s / 2,
         "status answers while a new generation loads (%.3fs vs %.2fs for the query)" % (status_s, reload_s))

    # shutdown while queries are in flight: accepted at once, queries finish
    for _ in range(4):
        c.send("query", heavy)
    time.sleep(min(0.05, one / 4))
    ts = time.time()
    sd = st.call("shutdown")
    shut_s = time.time() - ts
    t.ok(sd.get("result", {}).get("stopping") is True and sd["result"].get("pid") == s.proc.pid,
         "shutdown replies {stopping, pid} while queries run (%.3fs)" % shut_s)
    got = []
    try:
        for _ in range(4):
            got.append(c.recv())
    except Exception as e:  # noqa: BLE001
        got.append({"exception": repr(e)})
    t.ok(len(got) == 4 and all("result" in g for g in got), "queries in flight at shutdown still get their answers",
         [str(g)[:200] for g in got])
    t.ok(sl.wait_exit(s.proc, 120) and s.proc.returncode == 0, "then the server exits 0")
    err = s.stderr_text()
    t.ok("kill-server" in (err or ""), "and says why", err)
    t.ok(not os.path.exists(path) and not os.path.exists(path + ".lock"), "socket and lock removed")
    c.close()
    st.close()

    # a response over 64 MiB is replaced by an error asking to narrow the query
    import json
    d = json.load(open(tap.FIXTURE))
    d["requests"][0]["issues"] = d["requests"][0].get("issues", []) + ["x" * (65 * 1024 * 1024)]
    huge = os.path.join(t.tmp, "huge.json")
    json.dump(d, open(huge, "w"))
    del d
    hpath = os.path.join(t.tmp, "huge.sock")
    s = sl.Server(huge, "--path", hpath, "--idle-timeout", "300")
    r = sl.dsight("query", "--remote", hpath, "request", "--request", "req-001")
    t.ok(r.returncode == 1 and r.stdout == "" and "64 MiB" in r.stderr and "narrow the query" in r.stderr,
         "a response over 64 MiB becomes an error asking to narrow the query", r.stderr[:300])
    c = sl.Conn(hpath, timeout=300)
    q = c.call("query", {"kind": "request", "request_id": "req-001"})
    t.eq(q.get("error", {}).get("code"), -32002, "its RPC code is -32002")
    r = sl.dsight("query", "--remote", hpath, "request", "--request", "req-002")
    t.ok(r.returncode == 0 and s.alive(), "the server keeps serving", r.stderr[:300])
    c.close()
    s.stop()
    t.ok(s.proc.returncode == 0, "and stops cleanly")
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup()
    sys.exit(t.done())

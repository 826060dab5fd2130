#!/usr/bin/env python3
# tests/run: alone (wall-clock bounds of the server under test; see tests/README.md)
"""Warm sessions: queries run off the event loop, so status answers and
shutdown is accepted while long queries run; shutdown lets the queries in
flight finish (their answers arrive) before the server exits."""
import json
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

    # Each claim is shown from the server's side, not by comparing times:
    # a status answered while queries were in flight shows fewer finished
    # queries (server_time_us.samples) than it had received, and idle_s 0.
    # An attempt where this client was too slow to ask in time (a loaded
    # machine) proves nothing either way and is repeated, up to 5 times.
    c = sl.Conn(path, timeout=300)
    r = c.call("query", heavy)
    t.ok("result" in r, "a heavy query answers", str(r)[:300])
    st = sl.Conn(path, timeout=300)

    n = 8
    seen = []
    for attempt in range(5):
        done0 = st.call("status")["result"]["server_time_us"]["samples"]
        for _ in range(n):
            c.send("query", heavy)
        sr = st.call("status")["result"]
        got = [c.recv() for _ in range(n)]
        t.ok(all("result" in g for g in got), "all pipelined heavy queries answer (attempt %d)" % (attempt + 1))
        seen.append((sr["server_time_us"]["samples"] - done0, sr["idle_s"]))
        if seen[-1][0] < n and sr["idle_s"] == 0:
            break
    t.ok(seen[-1][0] < n and seen[-1][1] == 0,
         "status answers while long queries run (finished/in flight when it answered: %s)" % seen, seen)

    # a rebuild is loaded off the event loop: status answers meanwhile, from
    # the generation in use, while the query waits for the new one
    d = json.load(open(doc))
    seen = []
    for attempt in range(5):
        old = st.call("status")["result"]["generation"]
        d["meta"]["job"] = "rebuilt-%d" % attempt
        json.dump(d, open(doc + ".new", "w"))
        os.rename(doc + ".new", doc)
        c.send("query", {"kind": "summary"})
        sr = st.call("status")["result"]
        qr = c.recv()
        new = qr.get("result", {}).get("generation")
        seen.append((sr["generation"] == old, sr["idle_s"] == 0, new != old))
        if all(seen[-1]):
            break
    t.ok(all(seen[-1]) and qr["result"]["data"]["meta"]["job"] == "rebuilt-%d" % attempt,
         "status answers while a new generation loads (from the old generation; the query from the new)", seen)
    del d

    # shutdown while queries are in flight: accepted at once, queries finish.
    # "In flight" means received: wait until status counts the 4 queries
    # (another connection may otherwise be read first), then shut down.
    received = st.call("status")["result"]["queries"]
    for _ in range(4):
        c.send("query", heavy)
    for _ in range(6000):
        sr = st.call("status")["result"]
        if sr["queries"] >= received + 4:
            break
        time.sleep(0.01)
    t.ok(sr["queries"] >= received + 4, "the server received the 4 queries before the shutdown")
    sd = st.call("shutdown")
    t.ok(sd.get("result", {}).get("stopping") is True and sd["result"].get("pid") == s.proc.pid,
         "shutdown replies {stopping, pid} while queries run", sd)
    got = []
    try:
        for _ in range(4):
            got.append(c.recv())
    except Exception as e:  # noqa: BLE001
        got.append({"exception": repr(e)})
    t.ok(len(got) == 4 and all("result" in g for g in got), "queries in flight at shutdown still get their answers",
         [str(g)[:200] for g in got])
    t.ok(sl.wait_exit(s.proc, 120) and s.proc.returncode == 0, "then the server exits 0")
    err = s.check(t)
    t.ok("kill-server" in (err or ""), "and says why", err)
    t.ok(not os.path.exists(path) and not os.path.exists(path + ".lock"), "socket and lock removed")
    c.close()
    st.close()

    # a response over 64 MiB is replaced by an error asking to narrow the query
    d = json.load(open(tap.FIXTURE))
    d["requests"][0]["issues"] = d["requests"][0].get("issues", []) + ["x" * (1024 * 1024)] * 65  # 65 MiB, in strings under the 64 MiB cap
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
    s.check(t)
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

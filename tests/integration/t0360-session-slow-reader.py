#!/usr/bin/env python3
# tests/run: alone (wall-clock bounds of the server under test; see tests/README.md)
"""Warm sessions: a client that stops reading is throttled and, beyond
96 MiB of unsent replies, dropped, while other clients are served; below
that bound it keeps every answer."""
import json
import os
import shutil
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

MIB = 1 << 20
t = tap.T()
try:
    # one request whose answer is ~30 MiB: 3 unread answers stay below
    # 96 MiB, 4 exceed it
    d = json.load(open(tap.FIXTURE))
    d["requests"][0]["issues"] = d["requests"][0].get("issues", []) + ["x" * (30 * MIB)]
    doc = os.path.join(t.tmp, "big.json")
    json.dump(d, open(doc, "w"))
    del d
    rid = json.load(open(tap.FIXTURE))["requests"][0]["id"]
    path = os.path.join(t.tmp, "slow.sock")
    s = sl.Server(doc, "--path", path, "--idle-timeout", "300")
    t.ok(s.alive(), "server started", s.line)
    one = sl.frame({"jsonrpc": "2.0", "id": 1, "method": "query", "params": {"kind": "request", "request_id": rid}})

    def unread(k):
        """Sends k requests in one write and reads nothing; returns the
        socket."""
        c = socket.socket(socket.AF_UNIX)
        c.connect(path)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.sendall(one * k)
        return c

    def wait_answered(st, base, k):
        """Waits on the server's own count (status server_time_us.samples)
        until it has answered k queries past base: the unread replies are
        queued then."""
        for _ in range(6000):
            if st.call("status")["result"]["server_time_us"]["samples"] >= base + k:
                return True
            time.sleep(0.02)
        return False

    def replies(c, k):
        """Reads up to k frames from socket c; the lengths, then the
        exception's name if the connection ended first."""
        c.settimeout(120)
        conn = sl.Conn.__new__(sl.Conn)
        conn.s, conn.buf = c, b""
        got = []
        try:
            for _ in range(k):
                got.append(len(conn.recv_bytes()))
        except (EOFError, OSError) as e:
            got.append(type(e).__name__)
        return got

    # 3 x 30 MiB unread: throttled, not dropped; the answers all arrive
    st = sl.Conn(path)
    base = st.call("status")["result"]["server_time_us"]["samples"]
    c = unread(3)
    t.ok(wait_answered(st, base, 3), "the server answered the 3 requests of the client that does not read")
    r = sl.dsight("query", "--remote", path, "workers")
    t.ok(r.returncode == 0 and s.alive(), "other clients are served while one does not read", r.stderr)
    got = replies(c, 3)
    t.ok(len(got) == 3 and all(isinstance(g, int) and g > 30 * MIB for g in got),
         "below 96 MiB of unsent replies the slow client keeps every answer (%s bytes)" % got, got)
    c.close()

    # 4 x 30 MiB unread: dropped once the unsent replies pass 96 MiB
    base = st.call("status")["result"]["server_time_us"]["samples"]
    c = unread(4)
    t.ok(wait_answered(st, base, 4), "the server answered the 4 requests of the client that does not read")
    got = replies(c, 4)
    t.ok(len(got) < 4 or not all(isinstance(g, int) for g in got),
         "beyond 96 MiB of unsent replies the slow client is dropped (got %s)" % got, got)
    c.close()
    r = sl.dsight("query", "--remote", path, "workers")
    t.ok(r.returncode == 0 and s.alive(), "the server keeps serving the others", r.stderr)
    st.close()
    err = s.check(t)
    t.ok(err.count("dropping a client that does not read its responses") == 1,
         "the drop is logged once (and only for the client beyond the bound)", err[-2000:])
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

#!/usr/bin/env python3
"""Warm sessions: the protocol under hostile clients (random bytes, a 4 GiB
length prefix, invalid JSON, wrong jsonrpc, unknown method, a frame cut
mid-way, a disconnect mid-reply, a client that never reads) while a normal
client keeps getting answers; pipelining order; a connection from another
uid is refused by the credential check."""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
stop = threading.Event()
normal = {"ok": 0, "bad": []}


def normal_client(path):
    try:
        c = sl.Conn(path, timeout=30)
        while not stop.is_set():
            r = c.call("query", {"kind": "summary"})
            if "result" in r and "schema" in r["result"]["data"]:
                normal["ok"] += 1
            else:
                normal["bad"].append(r)
            time.sleep(0.002)
        c.close()
    except Exception as e:  # noqa: BLE001
        normal["bad"].append(repr(e))


try:
    doc = os.path.join(t.tmp, "ev.json")
    shutil.copy(tap.FIXTURE, doc)
    path = os.path.join(t.tmp, "h.sock")
    s = sl.Server(doc, "--path", path, "--idle-timeout", "300")
    t.ok(s.alive(), "server started", s.line)
    th = threading.Thread(target=normal_client, args=(path,))
    th.start()

    # pipelining: ten requests in one write, answers in request order
    c = sl.Conn(path)
    batch = b"".join(sl.frame({"jsonrpc": "2.0", "id": 100 + k, "method": "query" if k % 3 else "status",
                               "params": {"kind": "requests", "limit": k}} if k % 3 else
                              {"jsonrpc": "2.0", "id": 100 + k, "method": "status"}) for k in range(10))
    c.raw(batch)
    ids = [c.recv().get("id") for _ in range(10)]
    t.eq(ids, list(range(100, 110)), "pipelined responses come back in request order")
    # a request without hello is served as protocol 1; string ids are echoed
    c.send("query", {"kind": "workers"}, rid="abc")
    r = c.recv()
    t.ok(r.get("id") == "abc" and "result" in r, "string id echoed; no hello needed", r)
    # a notification gets no reply; the next request does
    c.raw(sl.frame({"jsonrpc": "2.0", "method": "status"}))
    r = c.call("status")
    t.ok(r.get("id") == c.next_id - 1 and "result" in r, "a notification is not answered", r)

    # invalid JSON: -32700, the connection stays usable
    c.raw(sl.frame(b"{not json"))
    r = c.recv()
    t.eq(r.get("error", {}).get("code"), -32700, "invalid JSON: -32700")
    t.eq(c.call("status").get("result", {}).get("pid"), s.proc.pid, "connection usable after invalid JSON")
    c.raw(sl.frame(b"\xff\xfe\x00garbage"))
    t.eq(c.recv().get("error", {}).get("code"), -32700, "invalid UTF-8: -32700")
    c.raw(sl.frame({"jsonrpc": "1.0", "id": 5, "method": "status"}))
    r = c.recv()
    t.ok(r.get("error", {}).get("code") == -32600 and r.get("id") == 5, "wrong jsonrpc: -32600 with the id", r)
    c.raw(sl.frame([1, 2, 3]))
    t.eq(c.recv().get("error", {}).get("code"), -32600, "a JSON array: -32600")
    r = c.call("frobnicate")
    t.ok(r.get("error", {}).get("code") == -32601 and "frobnicate" in r["error"]["message"], "unknown method: -32601", r)
    r = c.call("query", {"kind": "requests", "limit": "5"})
    t.ok(r.get("error", {}).get("code") == -32602 and "limit must be an integer or null" in r["error"]["message"],
         "wrong parameter type: -32602 naming it", r)
    r = c.call("query", {"kind": "requests", "limit": 5.0})
    t.eq(r.get("error", {}).get("code"), -32602, "limit 5.0: -32602")
    r = c.call("query", {"kind": "request", "request_id": "nope"})
    t.ok(r.get("error", {}).get("code") == -32602 and r["error"]["message"] == "Unknown client request: nope",
         "unknown request id: -32602 with the local message", r)
    r = c.call("query", [1])
    t.eq(r.get("error", {}).get("code"), -32602, "positional params: -32602")
    r = c.call("hello", {"protocol": 2, "client": "future"})
    t.ok(r.get("error", {}).get("code") == -32600 and c.closed_by_peer(), "protocol 2: -32600 and the connection is closed", r)
    c.close()

    # 4 GiB length prefix: error reply when possible, then closed
    c = sl.Conn(path)
    c.raw(b"\xff\xff\xff\xff" + b"x" * 100)
    r = c.recv()
    t.ok(r.get("error", {}).get("code") == -32600 and "8 MiB" in r["error"]["message"], "4 GiB prefix: error reply", r)
    t.ok(c.closed_by_peer(), "4 GiB prefix: connection closed")
    c.close()
    # just over 8 MiB
    c = sl.Conn(path)
    c.raw(struct.pack(">I", (8 << 20) + 1))
    t.eq(c.recv().get("error", {}).get("code"), -32600, "8 MiB + 1 prefix refused")
    c.close()

    # random bytes from several clients at once
    def random_client(seed):
        try:
            k = socket.socket(socket.AF_UNIX)
            k.settimeout(5)
            k.connect(path)
            k.sendall(os.urandom(4096 + seed))
            try:
                while k.recv(65536):
                    pass
            except (socket.timeout, ConnectionResetError):
                pass
            k.close()
        except OSError:
            pass
    rs = [threading.Thread(target=random_client, args=(k,)) for k in range(8)]
    for x in rs:
        x.start()
    for x in rs:
        x.join()
    t.ok(s.alive(), "random bytes: server alive")

    # a frame cut mid-way, then disconnect
    for _ in range(5):
        k = socket.socket(socket.AF_UNIX)
        k.connect(path)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "status"}).encode()
        k.sendall(struct.pack(">I", len(body)) + body[:10])
        k.close()
    # disconnect mid-reply: ask for many answers and vanish
    for _ in range(5):
        k = socket.socket(socket.AF_UNIX)
        k.connect(path)
        k.sendall(b"".join(sl.frame({"jsonrpc": "2.0", "id": j, "method": "query",
                                     "params": {"kind": "request", "request_id": "req-001"}}) for j in range(200)))
        k.recv(10)
        k.close()
    # a client that never reads: pipelines thousands of requests
    lazy = socket.socket(socket.AF_UNIX)
    lazy.connect(path)
    lazy.setblocking(False)
    sent = 0
    one = sl.frame({"jsonrpc": "2.0", "id": 1, "method": "query", "params": {"kind": "request", "request_id": "req-001"}})
    deadline = time.time() + 3
    while time.time() < deadline:
        try:
            lazy.send(one * 64)
            sent += 64
        except BlockingIOError:
            time.sleep(0.01)
    t.ok(sent > 0, "a client that never reads got %d requests in before back-pressure" % sent)
    ok_before = normal["ok"]
    deadline = time.time() + 120  # an event, not a time: the next answers
    while normal["ok"] < ok_before + 10 and not normal["bad"] and time.time() < deadline:
        time.sleep(0.01)
    t.ok(normal["ok"] >= ok_before + 10, "the normal client keeps getting answers while one client never reads")
    st = sl.dsight("ctl", "status", path)
    t.ok(st.returncode == 0, "status answers while one client never reads", st.stderr)
    lazy.close()

    stop.set()
    th.join(timeout=60)
    t.ok(not normal["bad"] and normal["ok"] > 50,
         "normal client: %d answers, no error, alongside the hostile ones" % normal["ok"], normal["bad"][:3])
    t.ok(s.alive(), "server alive after the hostile clients")
    r = sl.dsight("query", "--remote", path, "summary")
    t.eq(r.returncode, 0, "a fresh client is served")
    s.check(t)  # clean stop after hostile clients: exit 0, no sanitizer report

    # --- a connection from another uid is refused (server runs as nobody) ---
    if os.geteuid() == 0 and shutil.which("setpriv"):
        os.chmod(t.tmp, 0o755)
        nd = os.path.join(t.tmp, "nobody")
        os.mkdir(nd, 0o755)
        os.chown(nd, 65534, 65534)
        ndoc = os.path.join(nd, "ev.json")
        shutil.copy(doc, ndoc)
        os.chmod(ndoc, 0o644)
        npath = os.path.join(nd, "n.sock")
        asnobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        ns = sl.Server(ndoc, "--path", npath, "--idle-timeout", "300", user_cmd=asnobody,
                       env=sl.env_with(HOME="/", TMPDIR=nd, XDG_RUNTIME_DIR=None))
        t.ok(ns.alive() and ns.path == npath, "server started as nobody", ns.line)
        st = os.stat(npath)
        t.ok(st.st_uid == 65534 and (st.st_mode & 0o777) == 0o600, "its socket is nobody's, mode 0600")
        r = sl.dsight("query", "--remote", npath, "summary", env=sl.env_with(DSIGHT_REMOTE_TIMEOUT="10"))
        t.ok(r.returncode == 1 and r.stdout == "" and
             "serves only the user who started it (uid 65534); you are uid 0" in r.stderr,
             "root (another uid) is refused by the credential check, and told so", r.stdout[:200] + r.stderr)
        c = sl.Conn(npath)
        t.ok(c.closed_by_peer(), "the server closes a foreign connection at once")
        c.close()
        r = tap.run(asnobody + [sl.DSIGHT, "query", "--remote", npath, "summary"])
        t.ok(r.returncode == 0 and r.stdout.startswith("{"), "the same uid is served", r.stderr)
        ns.proc.terminate()
        t.ok(sl.wait_exit(ns.proc, 20) and ns.proc.returncode == 0, "nobody's server stops cleanly")
        err = ns.check(t)
        t.ok("refused a connection from uid 0" in err, "the refusal is logged", err)
    else:
        t.skip("a connection from another uid is refused", "needs root and setpriv to run a server as nobody")
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    stop.set()
    sl.cleanup(t)
    sys.exit(t.done())

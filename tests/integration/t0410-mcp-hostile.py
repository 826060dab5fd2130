#!/usr/bin/env python3
"""dsight mcp (and dsight query) against hostile input: a FIFO as dataset is
refused at once, a line over 4 MiB is refused while it is read (never held
in memory), arguments outside the input schema and ids that are neither a
string nor an integer are rejected, and an arbitrary JSON file's values are
not quoted back in errors."""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
dsight = tap.binpath("dsight")
report = os.path.join(t.tmp, "report")
r = tap.run([dsight, "build", tap.FIXTURE, "-o", report])
if not t.ok(r.returncode == 0, "build the example report", r.stderr):
    sys.exit(t.done())


def mcp(lines, timeout=60):
    """Runs dsight mcp over the given input (bytes or a writer function);
    returns (replies, seconds, returncode)."""
    p = subprocess.Popen([dsight, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    t0 = time.time()

    def feed():
        try:
            if callable(lines):
                lines(p.stdin)
            else:
                p.stdin.write(lines)
            p.stdin.close()
        except BrokenPipeError:
            pass
    th = threading.Thread(target=feed)
    th.start()
    watchdog = threading.Timer(timeout, p.kill)
    watchdog.start()
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    watchdog.cancel()
    th.join()
    mcp.maxrss_kb = ru.ru_maxrss
    return [json.loads(x) for x in out.decode().splitlines() if x], time.time() - t0, p.returncode


def call(rid, args):
    return (json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                        "params": {"name": "query_trace", "arguments": args}}) + "\n").encode()


def text(reply):
    return reply.get("result", {}).get("content", [{}])[0].get("text", "")


# --- a FIFO as dataset: refused at once, in MCP and in dsight query ---
fifo = os.path.join(t.tmp, "fifo")
os.mkfifo(fifo)
replies, secs, rc = mcp(call(1, {"dataset": fifo}) + call(2, {"dataset": report}), timeout=30)
t.ok(len(replies) == 2 and replies[0]["result"]["isError"] and "not a regular file" in text(replies[0]),
     "a FIFO dataset is a tool error", replies)
t.ok(len(replies) == 2 and replies[1]["result"]["isError"] is False, "the next call is answered", replies)
t.ok(secs < 10, "the FIFO does not hang the server (%.1f s)" % secs)
t0 = time.time()
r = tap.run([dsight, "query", fifo, "summary"], timeout=30)
t.ok(r.returncode == 1 and "not a regular file" in r.stderr and time.time() - t0 < 10,
     "dsight query FIFO fails at once", r.stderr)

# --- a 256 MiB line is refused while it is read, never held ---
big = 256 << 20


def write_big(f):
    chunk = b"x" * (1 << 20)
    f.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"')
    for _ in range(big >> 20):
        f.write(chunk)
    f.write(b'"}}\n')
    f.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode() + b"\n")


replies, secs, rc = mcp(write_big, timeout=120)
peak_kb = mcp.maxrss_kb
t.ok(len(replies) == 2 and replies[0].get("error", {}).get("code") == -32600 and
     "4 MiB" in replies[0]["error"]["message"], "an oversized line gets -32600", replies[:1])
t.ok(len(replies) == 2 and replies[1].get("result") == {} and replies[1].get("id") == 2,
     "the line after it is answered", replies[1:])
t.ok(peak_kb < 64 * 1024,
     "dsight mcp stays small while reading a 256 MiB line (peak %d KiB)" % peak_kb)

# --- arguments outside the schema; ids that are not a string or integer ---
lines = (call(1, {"dataset": report, "kind": "summary", "frobnicate": 1}) +
         call(2, {"dataset": report, "kind": "summary"}) +
         (json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}) + "\n").encode() +
         (json.dumps({"jsonrpc": "2.0", "id": [1], "method": "ping"}) + "\n").encode() +
         (json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}) + "\n").encode() +
         (json.dumps({"jsonrpc": "2.0", "id": None, "method": "ping"}) + "\n").encode() +
         b'{"jsonrpc":"2.0","id":7,"id":8,"method":"ping"}\n' +
         (json.dumps({"jsonrpc": "2.0", "id": "s", "method": "ping"}) + "\n").encode())
replies, secs, rc = mcp(lines)
t.ok(len(replies) == 8, "every line answered", replies)
if len(replies) == 8:
    t.ok(replies[0]["result"]["isError"] and "frobnicate" in text(replies[0]),
         "an argument outside the schema is refused, named", replies[0])
    t.ok(replies[1]["result"]["isError"] is False, "the schema's arguments are accepted", replies[1])
    for k, what in ((2, "an object id"), (3, "an array id"), (4, "a fractional id"), (5, "a null id")):
        t.ok(replies[k].get("error", {}).get("code") == -32600 and replies[k].get("id") is None,
             "%s is an invalid request" % what, replies[k])
    t.ok(replies[6].get("error", {}).get("code") == -32700, "duplicate keys are invalid JSON", replies[6])
    t.eq(replies[7], {"jsonrpc": "2.0", "id": "s", "result": {}}, "a string id is echoed")
t.eq(rc, 0, "the server exits 0 at the end of input")

# --- an arbitrary JSON file's values are not quoted back ---
secret = os.path.join(t.tmp, "config.json")
with open(secret, "w") as f:
    json.dump({"schema": "hunter2-api-token", "password": "hunter2"}, f)
replies, secs, rc = mcp(call(1, {"dataset": secret}))
t.ok(len(replies) == 1 and replies[0]["result"]["isError"] and "hunter2" not in text(replies[0]) and
     "not an evidence document" in text(replies[0]), "the error does not quote the file's values", replies)
r = tap.run([dsight, "query", secret, "summary"])
t.ok(r.returncode == 1 and "hunter2" not in r.stderr, "nor does dsight query", r.stderr)
sys.exit(t.done())

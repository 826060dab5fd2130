#!/usr/bin/env python3
"""List parameters (worker, session, agent, name, sort, fields) take at most
1,000 values, on every path: repeated CLI flags, comma-separated keys, an
RPC frame of 25,000 (and 200,000: ~1 MB) workers to a warm session, `dsight mcp`
and the Python client.  More is a clear usage error at once, in bounded
memory; the session keeps answering another client meanwhile; 1,000 values
still work."""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
ASAN = "asan" in os.path.basename(tap.BUILD)
DS = tap.binpath("dsight")
MIB = 1024  # in KiB
# what one of these commands may take: megabytes, where a quadratic list
# took 1.58 GB (the sanitizer build has a larger floor)
BOUND_KB = (512 if ASAN else 128) * MIB


def peak_kb_of(args, timeout=120):
    """Runs args; (returncode, stdout, stderr, peak RSS KiB)."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    res = {}

    def reader(name, f):
        res[name] = f.read().decode(errors="replace")
    ths = [threading.Thread(target=reader, args=(n, f)) for n, f in (("out", p.stdout), ("err", p.stderr))]
    for th in ths:
        th.start()
    watchdog = threading.Timer(timeout, p.kill)
    watchdog.start()
    _, status, ru = os.wait4(p.pid, 0)
    watchdog.cancel()
    for th in ths:
        th.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, res["out"], res["err"], ru.ru_maxrss


try:
    report = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))

    # --- the CLI ---
    args = [DS, "query", report, "requests"]
    rc, out, err, peak = peak_kb_of(args + ["--worker", "a"] * 20000)
    t.ok(rc == 2 and "--worker takes at most 1000 values" in err,
         "20,000 --worker flags: usage error, exit 2", err[-500:])
    t.ok(peak < BOUND_KB, "... in bounded memory (%d MiB)" % (peak // MIB))
    keys = ",".join("k%d" % k for k in range(20000))
    for flag in ("--fields", "--sort"):
        rc, out, err, peak = peak_kb_of(args + [flag, keys])
        t.ok(rc == 2 and "%s takes at most 1000 values" % flag in err and peak < BOUND_KB,
             "%s with 20,000 keys: usage error (%d MiB)" % (flag, peak // MIB), err[-500:])
    rc, out, err, peak = peak_kb_of(args + ["--sort", "start"] * 1001)
    t.ok(rc == 2 and "--sort takes at most 1000 values" in err, "1,001 repeated --sort flags: refused", err)
    rc, out, err, peak = peak_kb_of(args + ["--limit", "0"] + ["--worker", "decode-0"] * 1000)
    t.ok(rc == 0 and json.loads(out)["total"] > 0, "1,000 --worker values still work", err)

    # --- a warm session: frames of 25,000 and ~250,000 workers ---
    path = os.path.join(t.tmp, "l.sock")
    s = sl.Server(report, "--path", path, "--idle-timeout", "600")
    t.ok(s.alive(), "server started", s.line)
    pid = s.proc.pid
    c = sl.Conn(path, timeout=120)
    t.ok("result" in c.call("query", {"kind": "summary"}), "warm up")
    rss0 = sl.rss_kb(pid)
    worst = {"s": 0.0, "bad": 0, "n": 0}
    stop = threading.Event()

    def other_client():
        o = sl.Conn(path, timeout=120)
        while not stop.is_set():
            t0 = time.time()
            r = o.call("query", {"kind": "summary"})
            worst["s"] = max(worst["s"], time.time() - t0)
            worst["n"] += 1
            worst["bad"] += "result" not in r
            time.sleep(0.01)
        o.close()
    th = threading.Thread(target=other_client)
    th.start()
    for n in (25000, 200000):
        params = {"kind": "requests", "worker": ["a"] * n}
        frame_len = len(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "query", "params": params}))
        r = c.call("query", params)
        e = r.get("error", {})
        t.ok(e.get("code") == -32602 and e.get("message") == "worker takes at most 1000 values",
             "a %d-KB frame of %d workers: -32602 'worker takes at most 1000 values'" % (frame_len >> 10, n), r)
    r = c.call("query", {"kind": "requests", "fields": ",".join(["id"] * 100000)})
    t.ok(r.get("error", {}).get("message") == "fields takes at most 1000 values",
         "100,000 comma-separated fields over RPC: refused", r)
    r = c.call("query", {"kind": "requests", "limit": 0, "worker": ["decode-0"] * 1000})
    t.ok("result" in r and r["result"]["data"]["total"] > 0, "1,000 workers over RPC still work", r.get("error"))
    stop.set()
    th.join(120)
    grown = (sl.rss_kb(pid) - rss0) // MIB
    t.ok(grown < (256 if ASAN else 64), "the daemon's memory stays bounded (%+d MiB)" % grown)
    t.ok(worst["bad"] == 0 and worst["n"] > 0, "another client's %d summaries all answered (worst %.2f s)"
         % (worst["n"], worst["s"]))
    rc, out, err, peak = peak_kb_of([DS, "query", "--remote", path, "requests"] + ["--worker", "a"] * 1001)
    t.ok(rc == 2 and "--worker takes at most 1000 values" in err, "--remote with 1,001 workers: usage error", err)
    c.close()
    s.check(t)

    # --- dsight mcp (in process) ---
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "query_trace", "arguments": {"dataset": report, "kind": "requests",
                                                             "worker": ["a"] * 25000}}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "query_trace", "arguments": {"dataset": report, "kind": "summary"}}}]
    data = "".join(json.dumps(m) + "\n" for m in msgs).encode()
    p = subprocess.Popen([DS, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(data, timeout=120)
    replies = [json.loads(x) for x in out.decode().splitlines() if x.strip()]
    text = [(r.get("result", {}).get("content") or [{}])[0].get("text", "") for r in replies]
    t.ok(len(replies) == 2 and replies[0]["result"]["isError"] and "worker takes at most 1000 values" in text[0],
         "dsight mcp: 25,000 workers are a tool error naming the limit", replies[:1])
    t.ok(len(replies) == 2 and replies[1]["result"]["isError"] is False, "the next call is answered")

    # --- Python, in process (a new interpreter: the sanitizer build's
    # library needs its runtime preloaded) ---
    r = sl.python_with_dsight(
        "import sys, dsight\n"
        "ds = dsight.open(sys.argv[1])\n"
        "try:\n"
        "    ds.query('requests', worker=['a'] * 25000)\n"
        "    print('answered')\n"
        "except dsight.QueryError as exc:\n"
        "    print(exc)\n"
        "ds.close()\n", report)
    t.eq(r.stdout.strip(), "worker takes at most 1000 values", "Python: 25,000 workers are a QueryError")
finally:
    sl.cleanup(t)
sys.exit(t.done())

#!/usr/bin/env python3
"""Warm sessions: the idle clock (hello/status do not reset it, a query
does), idle reaping (last-query, orphaned through a subreaper), no reaping
while the owner lives, and report generations (rebuild, removal -32001,
recovery)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
try:
    doc = os.path.join(t.tmp, "ev.json")
    shutil.copy(tap.FIXTURE, doc)

    # --- the idle clock: hello and status do not reset it, a query does ---
    # Through the server's own clock: probed by hello and status every few
    # ms, its idle_s must still grow to 0.2 s (if a probe restarted the
    # clock it would stay near the probe interval, and the loop would run
    # into its deadline).  After a query, uptime_s - idle_s (when the clock
    # last restarted) moves from the start to after the probes.
    path = os.path.join(t.tmp, "clock.sock")
    s = sl.Server(doc, "--path", path, "--idle-start", "last-query", "--idle-timeout", "1h")
    c = sl.Conn(path)
    probes = []
    deadline = time.time() + 60
    while time.time() < deadline and (len(probes) < 20 or probes[-1]["idle_s"] < 0.2):
        c.call("hello", {"protocol": 1, "client": "probe"})
        probes.append(c.call("status")["result"])
        time.sleep(0.002)
    t.ok(probes[-1]["idle_s"] >= 0.2 and len(probes) >= 20,
         "hello and status do not reset the idle clock (idle_s %.3f after %d probes)" % (probes[-1]["idle_s"], len(probes)),
         [(p["uptime_s"], p["idle_s"]) for p in probes[-5:]])

    def restarted_ms(st):
        return round(st["uptime_s"] * 1000) - round(st["idle_s"] * 1000)
    before = probes[-1]
    r = c.call("query", {"kind": "summary"})
    after = c.call("status")["result"]
    t.ok("result" in r and restarted_ms(after) >= round(before["uptime_s"] * 1000) // 2 and after["queries"] == 1,
         "a query resets the idle clock (it restarts when the query ends: %d ms after the start, probes at %d ms)" %
         (restarted_ms(after), round(before["uptime_s"] * 1000)), (before, after))
    c.close()
    s.check(t)

    # --- reaped while probed: hello/status every 20 ms do not keep it alive ---
    path = os.path.join(t.tmp, "idle.sock")
    s = sl.Server(doc, "--path", path, "--idle-start", "last-query", "--idle-timeout", "1s")
    t.ok(s.alive() and "idle-timeout=1s" in s.line, "idle server started", s.line)
    probed = 0
    try:
        c = sl.Conn(path)
        deadline = time.time() + 120  # generous: the server must go by itself in ~1 s
        while time.time() < deadline:
            c.call("hello", {"protocol": 1, "client": "probe"})
            c.call("status")
            probed += 1
            time.sleep(0.02)
    except (EOFError, OSError):
        pass  # the server closed the connection: it is stopping
    exited = sl.wait_exit(s.proc, 60)
    t.ok(exited and s.proc.returncode == 0 and probed > 0,
         "an idle server exits 0 although hello/status probed it %d times" % probed)
    err = s.stderr_text() if exited else ""
    t.ok("idle for 1s" in err, "exit reason 'idle for 1s' on stderr", err)
    t.ok(not os.path.exists(path) and not os.path.exists(path + ".lock"), "idle exit removes socket and lock")

    # --- owned by a live parent: not reaped; reaped once the parent exits,
    # also when it is reparented to a subreaper (this test process) ---
    sl.become_subreaper()
    path = os.path.join(t.tmp, "owned.sock")
    out = os.path.join(t.tmp, "owned.out")
    errf = os.path.join(t.tmp, "owned.err")
    parent = subprocess.Popen(
        ["sh", "-c", '"$0" serve "$1" --path "$2" --idle-timeout 1s >"$3" 2>"$4" & wait', sl.DSIGHTD, doc, path, out, errf],
        stdin=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(out) and open(out).read().endswith("\n")):
        time.sleep(0.05)
    rec = sl.parse_record(open(out).read().strip()) if os.path.exists(out) else {}
    pid = int(rec.get("pid", "0"))
    t.ok(pid > 0, "owned server started", rec)
    owned = sl.Daemon(pid, errf, label="dsightd owned by sh, then orphaned to a subreaper") if pid else None
    # wait on the server's own idle clock, not on ours: idle 3x its timeout
    stj = {}
    deadline = time.time() + 120
    while time.time() < deadline:
        st = sl.dsight("ctl", "status", path)
        stj = json.loads(st.stdout) if st.returncode == 0 else {}
        if stj.get("idle_s", 0) >= 3 or st.returncode != 0:
            break
        time.sleep(0.1)
    t.ok(stj.get("idle_s", 0) >= 3 and stj.get("orphaned") is False and stj.get("idle_start") == "orphaned",
         "a server owned by a live parent is not reaped while idle 3x its 1 s timeout", stj)
    parent.kill()
    parent.wait()
    if owned:
        # reparented to this process (a subreaper): it must notice and go
        exited = owned.wait(60)
        t.ok(exited and owned.returncode == 0, "reaped once its owner is gone (parent now a subreaper), exit 0",
             owned.returncode)
        t.ok(not os.path.exists(path) and not os.path.exists(path + ".lock"), "the orphan removed socket and lock")
        errtxt = owned.check(t)  # read after the exit: the reason is written after unlinking
        t.ok("idle for 1s" in errtxt, "orphaned exit says idle", errtxt)

    # --- generations: rebuild, removal, recovery ---
    report = sl.build_report(doc, os.path.join(t.tmp, "report"))
    path = os.path.join(t.tmp, "gen.sock")
    s = sl.Server(report, "--path", path, "--idle-timeout", "300")
    gen1 = s.record.get("generation")
    c = sl.Conn(path)
    hello = c.call("hello", {"protocol": 1, "client": "test"})
    t.eq(hello.get("result", {}).get("generation"), gen1, "hello carries the generation")
    q = c.call("query", {"kind": "summary"})
    t.eq(q.get("result", {}).get("generation"), gen1, "query result carries the generation")

    # sql statements before the rebuild leave connections to the old file
    # in the generation's pool; after it they must read the new one
    jobsql = {"kind": "sql", "sql": "SELECT json_extract(json, '$.meta.job') FROM catalog"}
    for _ in range(3):
        before = c.call("query", jobsql)
    d = json.load(open(doc))
    d["meta"]["job"] = "example-run-rebuilt"
    doc2 = os.path.join(t.tmp, "ev2.json")
    json.dump(d, open(doc2, "w"))
    sl.build_report(doc2, report)
    q = c.call("query", {"kind": "summary"})
    gen2 = q.get("result", {}).get("generation")
    t.ok(gen2 and gen2 != gen1, "after a rebuild the next query answers from the new generation", q)
    t.ok(q.get("result", {}).get("data", {}).get("meta", {}).get("job") == "example-run-rebuilt",
         "and its data is the new report's")
    after = c.call("query", jobsql)
    t.ok(before.get("result", {}).get("data", {}).get("rows") != after.get("result", {}).get("data", {}).get("rows")
         and after.get("result", {}).get("data", {}).get("rows") == [["example-run-rebuilt"]],
         "and an sql statement reads the new file, not a connection kept from before",
         (before, after))
    loc = sl.dsight("query", report, "summary")
    rem = sl.dsight("query", "--remote", path, "summary")
    t.ok(loc.stdout == rem.stdout and loc.returncode == 0, "remote == local after the rebuild")
    st = json.loads(sl.dsight("ctl", "status", path).stdout or "{}")
    t.eq(st.get("generation"), gen2, "status shows the new generation")

    moved = report + ".away"
    os.rename(report, moved)
    r = sl.dsight("query", "--remote", path, "summary")
    t.ok(r.returncode == 1 and r.stderr.startswith('{"ok": false, "error": ') and "could not be opened" in r.stderr,
         "report removed: a clear error, exit 1", r.stderr)
    q = c.call("query", {"kind": "summary"})
    t.eq(q.get("error", {}).get("code"), -32001, "report removed: -32001, the new generation could not be opened")
    t.ok(s.alive(), "the server keeps running without its report")
    st = sl.dsight("ctl", "status", path)
    t.eq(st.returncode, 0, "status still answers")
    os.rename(moved, report)
    r = sl.dsight("query", "--remote", path, "summary")
    t.ok(r.returncode == 0 and r.stdout == loc.stdout, "report put back: the next query recovers", r.stderr)
    c.close()
    s.check(t)
    t.ok(not os.path.exists(path), "socket removed on a clean stop")

    # --- a document dataset: generation is the SHA-256 prefix of the file ---
    import hashlib
    path = os.path.join(t.tmp, "doc.sock")
    s = sl.Server(doc, "--path", path)
    want = hashlib.sha256(open(doc, "rb").read()).hexdigest()[:32]
    t.eq(s.record.get("generation"), want, "document generation = first 32 hex digits of its SHA-256")
    shutil.copy(doc2, doc)
    r = sl.dsight("query", "--remote", path, "summary")
    t.ok(r.returncode == 0 and "example-run-rebuilt" in r.stdout, "a rewritten document is reloaded", r.stderr)
    s.check(t)
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

#!/usr/bin/env python3
"""Warm sessions: idle reaping (last-query, orphaned), no reaping while the
owner lives, and report generations (rebuild, removal, recovery)."""
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

    # --- --idle-start last-query --idle-timeout 1s ---
    path = os.path.join(t.tmp, "idle.sock")
    t0 = time.time()
    s = sl.Server(doc, "--path", path, "--idle-start", "last-query", "--idle-timeout", "1s")
    t.ok(s.alive() and "idle-timeout=1s" in s.line, "idle server started", s.line)
    r = sl.dsight("query", "--remote", path)
    t.eq(r.returncode, 0, "a query resets the idle clock")
    exited = sl.wait_exit(s.proc, 10)
    t.ok(exited and s.proc.returncode == 0, "idle server exits 0 within a few seconds (%.1fs)" % (time.time() - t0))
    err = s.stderr_text() if exited else ""
    t.ok("idle for 1" in err, "exit reason 'idle for ...' on stderr", err)
    t.ok(not os.path.exists(path) and not os.path.exists(path + ".lock"), "idle exit removes socket and lock")

    # --- owned by a live parent: not reaped; reaped once the parent exits ---
    path = os.path.join(t.tmp, "owned.sock")
    out = os.path.join(t.tmp, "owned.out")
    errf = os.path.join(t.tmp, "owned.err")
    parent = subprocess.Popen(
        ["sh", "-c", '"$0" serve "$1" --path "$2" --idle-timeout 1s >"$3" 2>"$4" & wait', sl.DSIGHTD, doc, path, out, errf],
        stdin=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and not (os.path.exists(out) and open(out).read().endswith("\n")):
        time.sleep(0.05)
    rec = sl.parse_record(open(out).read().strip()) if os.path.exists(out) else {}
    pid = int(rec.get("pid", "0"))
    t.ok(pid > 0, "owned server started", rec)
    time.sleep(3)
    st = sl.dsight("ctl", "status", path)
    stj = json.loads(st.stdout) if st.returncode == 0 else {}
    t.ok(os.path.exists(path) and stj.get("orphaned") is False and stj.get("idle_start") == "orphaned",
         "a server owned by a live parent is not reaped after 3 s with a 1 s timeout", st.stdout + st.stderr)
    parent.kill()
    parent.wait()
    gone = sl.wait_gone(path, 15)
    t.ok(gone, "reaped once the owner is gone (orphaned)")
    time.sleep(0.2)
    errtxt = open(errf).read() if os.path.exists(errf) else ""
    t.ok("idle for" in errtxt, "orphaned exit says idle", errtxt)
    if not gone and pid:
        sl.kill_pid(pid)

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
    t.ok(q.get("error", {}).get("code", 0) <= -32000, "report removed: a data error code (<= -32000)", q)
    t.ok(s.alive(), "the server keeps running without its report")
    st = sl.dsight("ctl", "status", path)
    t.eq(st.returncode, 0, "status still answers")
    os.rename(moved, report)
    r = sl.dsight("query", "--remote", path, "summary")
    t.ok(r.returncode == 0 and r.stdout == loc.stdout, "report put back: the next query recovers", r.stderr)
    c.close()
    s.stop()
    t.ok(s.proc.returncode == 0 and not os.path.exists(path), "clean stop")

    # --- a document dataset: generation is the SHA-256 prefix of the file ---
    import hashlib
    path = os.path.join(t.tmp, "doc.sock")
    s = sl.Server(doc, "--path", path)
    want = hashlib.sha256(open(doc, "rb").read()).hexdigest()[:32]
    t.eq(s.record.get("generation"), want, "document generation = first 32 hex digits of its SHA-256")
    shutil.copy(doc2, doc)
    r = sl.dsight("query", "--remote", path, "summary")
    t.ok(r.returncode == 0 and "example-run-rebuilt" in r.stdout, "a rewritten document is reloaded", r.stderr)
    s.stop()
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup()
    sys.exit(t.done())

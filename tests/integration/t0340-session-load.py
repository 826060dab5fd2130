#!/usr/bin/env python3
"""Warm sessions under load: 32 concurrent clients x 2,000 queries with no
error and no dropped connection, while status keeps answering; the server
then stops cleanly (leak-free under the ASan build)."""
import json
import os
import shutil
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
    report = sl.build_report(doc, os.path.join(t.tmp, "report"))
    path = os.path.join(t.tmp, "load.sock")
    s = sl.Server(report, "--path", path, "--idle-timeout", "600")
    t.ok(s.alive(), "server started", s.line)
    load = subprocess.Popen([tap.binpath("session-load"), "rpc", path, "32", "2000",
                             json.dumps({"kind": "requests", "limit": 2})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    worst = 0.0
    polls = 0
    while load.poll() is None:
        t0 = time.time()
        st = sl.dsight("ctl", "status", path)
        worst = max(worst, time.time() - t0)
        polls += st.returncode == 0
        time.sleep(0.2)
    out, err = load.communicate()
    res = json.loads(out) if out.strip() else {}
    t.ok(load.returncode == 0 and res.get("errors") == 0 and res.get("queries") == 64000,
         "32 clients x 2,000 queries: no error, no dropped connection (%s)" % out.strip(), err)
    print("# p50 %s us, p99 %s us, %s queries/s" % (res.get("p50_us"), res.get("p99_us"), res.get("qps")))
    t.ok(polls > 0 and worst < 10, "status answers during the load (worst %.2fs over %d polls)" % (worst, polls))
    st = json.loads(sl.dsight("ctl", "status", path).stdout or "{}")
    t.ok(st.get("queries", 0) >= 64000, "status counts the queries", st)
    err = s.stop()
    t.ok(s.proc.returncode == 0 and not os.path.exists(path), "clean stop after the load (exit %s)" % s.proc.returncode, err[-3000:])
    t.ok("Sanitizer" not in err, "no sanitizer report from the daemon", err[-3000:])
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup()
    sys.exit(t.done())

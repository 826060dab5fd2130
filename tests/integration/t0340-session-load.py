#!/usr/bin/env python3
# tests/run: alone (wall-clock bounds of the server under test; see tests/README.md)
"""Warm sessions under load: 32 concurrent clients x 2,000 queries (500 in
the quick tier and on the sanitizer build) with no
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
    per = tap.matrix(2000, 500)
    load = subprocess.Popen([tap.binpath("session-load"), "rpc", path, "32", str(per),
                             json.dumps({"kind": "requests", "limit": 2})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    polls = failed_polls = 0
    while load.poll() is None:
        st = sl.dsight("ctl", "status", path)
        polls += 1
        failed_polls += st.returncode != 0
        time.sleep(0.2)
    out, err = load.communicate()
    res = json.loads(out) if out.strip() else {}
    t.ok(load.returncode == 0 and res.get("errors") == 0 and res.get("queries") == 32 * per,
         "32 clients x %d queries: no error, no dropped connection (%s)" % (per, out.strip()), err)
    print("# p50 %s us, p99 %s us, %s queries/s" % (res.get("p50_us"), res.get("p99_us"), res.get("qps")))
    t.ok(polls > 0 and failed_polls == 0, "status answers during the load (%d polls, %d failed)" % (polls, failed_polls))
    st = json.loads(sl.dsight("ctl", "status", path).stdout or "{}")
    t.ok(st.get("queries", 0) >= 32 * per, "status counts the queries", st)
    s.check(t)  # exit 0, no sanitizer report (the ASan build checks leaks)
    t.ok(not os.path.exists(path), "socket removed after the load")
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

#!/usr/bin/env python3
# tests/run: tsan (threads: also run on the ThreadSanitizer build)
"""Warm sessions: `dsight query --remote` prints byte for byte what the local
`dsight query` prints (stdout, stderr, exit status) for every kind over a set
of parameter combinations, on both backends (SQLite report and document)."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

# Flag sets per kind (the fixture's names); errors are compared as well.
SETS = [
    [],
    ["summary"],
    ["summary", "--pretty"],
    ["requests"],
    ["requests", "--from", "3", "--to", "4"],
    ["requests", "--search", "CHAT", "--limit", "2", "--offset", "1"],
    ["requests", "--session", "sess-A"],
    ["requests", "--agent", "planner"],
    ["requests", "--worker", "decode-0", "--min-ttft-ms", "10.5"],
    ["requests", "--worker", ""],
    ["requests", "--search", "ünicode"],
    ["requests", "--limit", "0"],
    ["requests", "--pretty"],
    ["request", "--request", "req-001"],
    ["request", "--request", "req-004", "--pretty"],
    ["request", "--request", "nope"],
    ["request"],
    ["lifecycle", "--request", "req-002"],
    ["lifecycle", "--request", "missing"],
    ["metrics"],
    ["metrics", "--points"],
    ["metrics", "--worker", "decode-0", "--rank", "0", "--points"],
    ["metrics", "--name", "gpu_utilization", "--from", "2", "--to", "5", "--points"],
    ["metrics", "--name", "log_decode_request_limit", "--from", "6"],
    ["metrics", "--offset", "2", "--limit", "2"],
    ["profiles"],
    ["profiles", "--worker", "decode-0"],
    ["profiles", "--rank", "0"],
    ["profiles", "--profile", "1"],
    ["nsys"],
    ["nsys", "--from", "9", "--to", "10", "--profile", "0", "--name", "FORWARD"],
    ["nsys", "--name", "ÜNICODE"],
    ["nsys", "--from", "10", "--to", "11"],
    ["nsys", "--offset", "1", "--limit", "3", "--pretty"],
    ["cpu"],
    ["cpu", "--worker", "frontend", "--limit", "2"],
    ["cpu", "--from", "0", "--to", "1"],
    ["iterations"],
    ["iterations", "--worker", "decode-0", "--rank", "0"],
    ["iterations", "--rank", "1"],
    ["sources"],
    ["sources", "--offset", "1", "--limit", "1"],
    ["server_spans"],
    ["server_spans", "--from", "0", "--to", "5"],
    ["sessions"],
    ["sessions", "--agent", "planner"],
    ["sessions", "--session", "sess-Ü"],
    ["workers"],
    ["workers", "--worker", "frontend"],
    ["families"],
    ["families", "--name", "LOG"],
    # validation errors: same message, same exit status
    ["summary", "--from", "5", "--to", "4"],
    ["requests", "--from", "nan"],
    ["requests", "--to", "inf"],
    ["requests", "--min-ttft-ms", "-1"],
    ["requests", "--min-ttft-ms", "nan"],
    ["requests", "--min-ttft-ms", "inf", "--from", "7", "--to", "3"],
    ["requests", "--limit", "1001"],
    ["requests", "--offset", "-1"],
    ["nosuchkind"],
    ["requests", "--limit", "abc"],
    ["summary", "--from", "-0.0", "--to", "12"],
    ["summary", "--to", "12.000000000000002"],
    # analysis parameters: several values, sort, joins, fields, notes
    ["requests", "--worker", "decode-0", "--worker", "nobody", "--session", "sess-A",
     "--session", "sess-B", "--sort", "-ttft_ms,id", "--fields", "id,ttft_ms"],
    ["requests", "--worker", "a", "--worker", ""],
    ["requests", "--sort", "nope"],
    ["sessions", "--sort", "-requests", "--sort", "id", "--agent", "sess-B", "--agent", "agent-A"],
    ["nsys", "--request", "req-001", "--phase", "prefill", "--fields", "name,start"],
    ["nsys", "--request", "req-003", "--phase", "decode"],
    ["iterations", "--request", "req-003"],
    ["cpu", "--request", "req-002", "--phase", "decode"],
    ["metrics", "--request", "req-001", "--name", "gpu_utilization", "--name", "nope"],
    ["metrics", "--name", "running"],
    ["nsys", "--request", "req-001", "--from", "1"],
    ["nsys", "--phase", "whole"],
    ["nsys", "--request", "req-001", "--phase", "middle"],
    ["request", "req-001"],
    ["nsys", "extra"],
]

# The fixed parameter sets of the query engine's parity check
# (scripts/tools/query-parity.c), each run for every kind.
KINDS = ["summary", "requests", "request", "lifecycle", "metrics", "profiles", "nsys", "cpu",
         "iterations", "sources", "server_spans", "sessions", "workers", "families"]
FIXED = [
    [],
    ["--from", "3", "--to", "4"],
    ["--offset", "1", "--limit", "1"],
    ["--limit", "0"],
    ["--from", "9.100000001", "--to", "9.2"],
    ["--worker", "decode-0", "--rank", "0"],
    ["--points"],
    ["--points", "--from", "6.0"],
    ["--profile", "0"],
    ["--profile", "1", "--limit", "1000"],
    ["--rank", "1"],
    ["--name", "ÜNICODE"],
    ["--name", "forward"],
    ["--name", "num_requests_running"],
    ["--search", "SESS"],
    ["--min-ttft-ms", "900"],
    ["--session", "sess-A"],
    ["--agent", "agent-A"],
    ["--worker", "frontend"],
    ["--from", "-1"],
    ["--limit", "1001"],
    ["--min-ttft-ms", "nan"],
    ["--request", "no-such-request"],
    ["--offset", "1000000", "--limit", "5"],
]

t = tap.T()
try:
    doc = os.path.join(t.tmp, "ev.json")
    shutil.copy(tap.FIXTURE, doc)
    report = sl.build_report(doc, os.path.join(t.tmp, "report"))
    for label, dataset in (("sqlite", report), ("document", doc)):
        path = os.path.join(t.tmp, label + ".sock")
        s = sl.Server(dataset, "--path", path, "--idle-timeout", "300")
        t.ok(s.alive() and s.path == path, "%s: server started" % label, s.line)
        same = 0
        for args in SETS:
            loc = sl.dsight("query", dataset, *args)
            rem = sl.dsight("query", "--remote", path, *args)
            name = "%s: %s" % (label, " ".join(args) or "(default)")
            ok = (loc.stdout == rem.stdout and loc.stderr == rem.stderr and loc.returncode == rem.returncode)
            if ok:
                same += 1
            t.ok(ok, "remote == local: " + name,
                 "local rc=%d out=%r err=%r\nremote rc=%d out=%r err=%r" % (
                     loc.returncode, loc.stdout[:300], loc.stderr[:300],
                     rem.returncode, rem.stdout[:300], rem.stderr[:300]))
        t.ok(any(sl.dsight("query", dataset, *a).returncode == 0 for a in SETS[:3]), "%s: local queries succeed" % label)
        st = sl.dsight("ctl", "status", path)
        q = json.loads(st.stdout).get("queries", 0) if st.returncode == 0 else 0
        # a few sets fail in the client's own flag parsing (--limit abc)
        t.ok(len(SETS) - 6 <= q <= len(SETS), "%s: status counts the queries" % label, st.stdout)
        if label == "sqlite":
            # every kind over the engine's fixed parity sets: one TAP line per
            # kind; the whole matrix on the plain build in the full tier,
            # every 4th pair otherwise (tap.matrix: under the sanitizers each
            # of these 672 processes costs 0.1 s of CPU before it starts)
            pairs = [(k, x) for k in KINDS for x in FIXED]
            pairs = tap.matrix(pairs, pairs[::4])
            for kind in KINDS:
                bad = []
                sets = [x for k, x in pairs if k == kind]
                for extra in sets:
                    args = [kind] + (extra if "--request" in extra else ["--request", "req-001"] + extra)
                    loc = sl.dsight("query", dataset, *args)
                    rem = sl.dsight("query", "--remote", path, *args)
                    if (loc.stdout, loc.stderr, loc.returncode) != (rem.stdout, rem.stderr, rem.returncode):
                        bad.append("%s: local rc=%d %r / remote rc=%d %r" % (
                            " ".join(args), loc.returncode, (loc.stdout + loc.stderr)[:200],
                            rem.returncode, (rem.stdout + rem.stderr)[:200]))
                t.ok(not bad, "remote == local: %s over %d of the %d fixed parity sets" % (kind, len(sets), len(FIXED)),
                     "\n".join(bad[:5]))
        s.check(t)  # a clean stop: exit 0, no sanitizer report
        t.ok(not os.path.exists(path), "%s: socket removed on stop" % label)
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

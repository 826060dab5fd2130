#!/usr/bin/env python3
"""dsight mcp driven as an MCP client would drive it, over pipes: the
protocol, every kind against dsight query, version negotiation, a rebuilt
report, the cache of 8 open datasets (least recently used evicted).  Every
mcp process must exit 0 with no sanitizer report on stderr."""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
dsight = tap.binpath("dsight")
report = os.path.join(t.tmp, "report")
r = tap.run([dsight, "build", tap.FIXTURE, "-o", report])
if not t.ok(r.returncode == 0, "build the example report", r.stderr):
    sys.exit(t.done())


class Client:
    def __init__(self, *flags):
        self.p = subprocess.Popen([dsight, "mcp", *flags], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.next_id = 0

    def finish(self, label):
        """Closes stdin (end of input) and checks: exit 0, no sanitizer
        report on stderr."""
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        err = self.p.stderr.read()
        self.p.stdout.close()
        self.p.stderr.close()
        t.eq(rc, 0, "%s: end of input, clean exit 0" % label)
        rep = tap.sanitizer_report(err)
        t.ok(rep is None, "%s: no sanitizer report on stderr" % label, rep)
        return rc

    def send_raw(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        return json.loads(line) if line else None

    def call(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw(json.dumps(msg))
        reply = self.read()
        return reply

    def tool(self, args):
        return self.call("tools/call", {"name": "query_trace", "arguments": args})


c = Client()
init = c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}})
t.eq(init["result"]["protocolVersion"], "2025-06-18", "initialize echoes a supported version")
t.ok(init["result"]["capabilities"].get("tools") is not None, "initialize advertises tools")
c.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
t.eq(c.call("ping"), {"jsonrpc": "2.0", "id": c.next_id, "result": {}}, "ping answers {}")

tools = c.call("tools/list")["result"]["tools"]
t.eq([x["name"] for x in tools], ["query_trace"], "one tool, query_trace")
schema = tools[0]["inputSchema"]
props = schema["properties"]
want = ["dataset", "kind", "start", "end", "request_id", "phase", "session", "agent", "worker",
        "rank", "profile", "name", "search", "min_ttft_ms", "sort", "fields", "offset", "limit",
        "points", "group_by", "bucket", "of"]
t.ok(set(want) <= set(props), "schema lists every query parameter by its RPC name", sorted(props))
t.eq(props["phase"]["enum"], ["prefill", "decode", "whole"], "phase is a closed enum")
t.eq([a.get("type") for a in props["worker"]["anyOf"]], ["string", "array"],
     "worker takes one string or a list of strings")
t.ok("-ttft_ms" in props["sort"]["anyOf"][1]["items"]["enum"], "sort keys are an enum")
t.eq(schema["required"], ["dataset"], "dataset is required")
t.eq((props["kind"]["default"], props["limit"]["default"], props["offset"]["default"],
      props["points"]["default"]), ("summary", 100, 0, False), "schema defaults")
t.eq((props["bucket"]["type"], props["bucket"]["exclusiveMinimum"], props["of"]["enum"]),
     ("number", 0, ["requests", "nsys", "cpu", "metrics", "gpu"]), "timeline parameters typed, of closed")
t.eq(props["group_by"]["enum"], ["name", "worker", "profile", "tid", "device", "stream",
                                 "gpu_kind", "nvtx", "session", "agent", "status",
                                 "client_kind", "group", "gpu", "host"], "group_by fields are an enum")
t.eq((props["max_depth"]["type"], props["max_depth"]["minimum"], props["min_duration"]["type"],
      props["self_time"]["type"]), ("integer", 0, "number", "boolean"),
     "the range filters and --self come from the table")
t.eq((props["rank"]["type"], props["start"]["type"], props["points"]["type"]),
     ("integer", "number", "boolean"), "schema types")
ann = tools[0]["annotations"]
t.ok(ann["readOnlyHint"] is True and ann["destructiveHint"] is False, "read-only, non-destructive")

kinds = ["summary", "requests", "request", "lifecycle", "metrics", "profiles", "nsys", "cpu",
         "iterations", "sources", "server_spans", "sessions", "workers", "families"]
fixture = json.load(open(tap.FIXTURE))
rid = fixture["requests"][0]["id"]
for kind in kinds:
    args = {"dataset": report, "kind": kind}
    cli = [dsight, "query", report, kind]
    if kind in ("request", "lifecycle"):
        args["request_id"] = rid
        cli += ["--request", rid]
    if kind == "metrics":
        args["points"] = True
        cli += ["--points"]
    res = c.tool(args)["result"]
    local = tap.run(cli)
    ok = (res.get("isError") is False and res["content"][0]["text"] == local.stdout.rstrip("\n")
          and res["structuredContent"] == json.loads(local.stdout))
    t.ok(ok, "tools/call %s equals dsight query" % kind,
         "mcp: %r\ncli: %r %r" % (res, local.stdout[:300], local.stderr))

# the analysis parameters: JSON arrays and typed values equal repeated flags
for args, cli in (
        ({"kind": "requests", "worker": ["decode-0", "nobody"], "sort": ["-ttft_ms", "id"],
          "fields": ["id", "ttft_ms"]},
         ["requests", "--worker", "decode-0", "--worker", "nobody", "--sort", "-ttft_ms,id",
          "--fields", "id,ttft_ms"]),
        ({"kind": "nsys", "request_id": rid, "phase": "prefill", "fields": "name,start"},
         ["nsys", "--request", rid, "--phase", "prefill", "--fields", "name,start"]),
        ({"kind": "metrics", "name": ["nope"]}, ["metrics", "--name", "nope"])):
    res = c.tool(dict(args, dataset=report))["result"]
    local = tap.run([dsight, "query", report] + cli)
    t.ok(res.get("isError") is False and res["content"][0]["text"] == local.stdout.rstrip("\n"),
         "tools/call %s equals dsight query %s" % (json.dumps(args), " ".join(cli)),
         "mcp: %r\ncli: %r %r" % (res, local.stdout[:300], local.stderr))
for args, want in (({"kind": "requests", "worker": []}, "worker must not be an empty list"),
                   ({"kind": "requests", "agent": ["a", ""]}, "agent values must not be empty"),
                   ({"kind": "nsys", "phase": "decode"}, "--phase needs --request"),
                   ({"kind": "nsys", "sort": "-foo"},
                    "Unknown sort key 'foo' for nsys; choose from start, end, duration, name, profile")):
    res = c.tool(dict(args, dataset=report))["result"]
    t.ok(res.get("isError") is True and res["content"][0]["text"] == want,
         "tools/call %s: %s" % (json.dumps(args), want), res)

res = c.tool({"dataset": report, "kind": "nsys", "limit": "5"})["result"]
t.ok(res.get("isError") is True and "limit must be an integer" in res["content"][0]["text"],
     "wrong parameter type is a tool error with the validation message", res)
res = c.tool({"dataset": report, "kind": "nsys", "start": 5, "end": 3})["result"]
t.ok(res.get("isError") is True and res["content"][0]["text"] ==
     "Require 0 <= start < end <= 12.0 (run duration in seconds from origin_ns)",
     "range validation message", res)
res = c.tool({"dataset": report, "kind": "request", "request_id": "nope"})["result"]
t.ok(res.get("isError") is True and "Unknown client request: nope" in res["content"][0]["text"],
     "unknown request is a tool error", res)
res = c.tool({"dataset": os.path.join(t.tmp, "missing")})["result"]
t.ok(res.get("isError") is True, "missing dataset is a tool error", res)
err = c.call("tools/call", {"name": "no_such_tool", "arguments": {}})
t.ok("error" in err and err["error"]["code"] == -32602, "unknown tool is a protocol error", err)
err = c.call("no/such/method")
t.ok("error" in err and err["error"]["code"] == -32601, "unknown method", err)
c.send_raw("{this is not json")
err = c.read()
t.ok(err and err["error"]["code"] == -32700 and err["id"] is None, "malformed line answered", err)
t.ok(c.call("ping").get("result") == {}, "server keeps serving after a malformed line")

# A report rebuilt between two calls: the second call answers the new generation.
gen1 = json.loads(open(os.path.join(report, "manifest.json")).read())["generation"]
first = c.tool({"dataset": report, "kind": "summary"})["result"]
doc = json.load(open(tap.FIXTURE))
doc["meta"]["job"] = "rebuilt-job"
changed = os.path.join(t.tmp, "changed.json")
json.dump(doc, open(changed, "w"))
r = tap.run([dsight, "build", changed, "-o", report])
t.ok(r.returncode == 0, "rebuild the report", r.stderr)
second = c.tool({"dataset": report, "kind": "summary"})["result"]
t.ok(second.get("isError") is False and second["structuredContent"]["meta"]["job"] == "rebuilt-job"
     and first["structuredContent"]["meta"]["job"] == "example-run",
     "a rebuilt report is reopened and answers the new generation", second)

# The cache keeps 8 datasets open; a 9th evicts the least recently used.
# Seen from outside: which report files the process holds open.
reports = []
for k in range(9):
    rk = os.path.join(t.tmp, "r%d" % k)
    shutil.copytree(report, rk)
    reports.append(os.path.realpath(rk))


def held():
    """Indices of the reports that dsight mcp holds a file of open."""
    out = set()
    fdd = "/proc/%d/fd" % c.p.pid
    for fd in os.listdir(fdd):
        try:
            target = os.readlink(os.path.join(fdd, fd))
        except OSError:
            continue
        for k, rk in enumerate(reports):
            if target.startswith(rk + "/"):
                out.add(k)
    return out


answers_ok = True
for k in range(8):
    res = c.tool({"dataset": reports[k], "kind": "summary"})["result"]
    answers_ok = answers_ok and res.get("isError") is False
t.ok(answers_ok, "eight datasets answer")
t.eq(held(), set(range(8)), "eight datasets stay open between calls")
c.tool({"dataset": reports[0], "kind": "workers"})  # 0 is now the most recent; 1 the least
res = c.tool({"dataset": reports[8], "kind": "summary"})["result"]
t.ok(res.get("isError") is False, "a ninth dataset answers", res)
t.eq(held(), set(range(9)) - {1}, "the ninth evicts the least recently used (not the first opened)")
res = c.tool({"dataset": reports[1], "kind": "summary"})["result"]
local = tap.run([dsight, "query", reports[1], "summary"])
t.ok(res.get("isError") is False and res["structuredContent"] == json.loads(local.stdout),
     "an evicted dataset is reopened on its next call", res)
t.eq(held(), set(range(9)) - {2}, "which evicts the next least recently used")
c.finish("mcp session")

# The sql engine: the first sql call starts loading nvtx and metric_points
# into memory; later statements read them through virtual tables (their
# plan says so) with the file's rows; --no-sql-engine never loads them.
def sql_rows(cl, sql):
    res = cl.tool({"dataset": report, "kind": "sql", "sql": sql})["result"]
    return json.loads(res["content"][0]["text"])["rows"] if not res["isError"] else res


def plan(cl):
    return " ".join(r[3] for r in sql_rows(cl, "EXPLAIN QUERY PLAN SELECT name, count(*) FROM nvtx GROUP BY name"))


STMTS = ["SELECT name, count(*), sum(duration) FROM nvtx GROUP BY name ORDER BY name",
         "SELECT name, count(*), avg(value), max(value) FROM metric_points GROUP BY name",
         "SELECT * FROM nvtx WHERE start >= 1 AND start < 3 ORDER BY profile, ordinal"]
local = [json.loads(tap.run([dsight, "query", report, "sql", "--sql", q]).stdout)["rows"]
         for q in STMTS]
for flags, engine in (((), True), (("--no-sql-engine",), False)):
    c3 = Client(*flags)
    c3.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    first = [sql_rows(c3, q) for q in STMTS]
    deadline, p = time.time() + 30, plan(c3)
    while engine and "VIRTUAL TABLE" not in p and time.time() < deadline:
        time.sleep(0.1)
        p = plan(c3)
    t.ok(("VIRTUAL TABLE" in p) == engine,
         "mcp %s: statements %s the in-memory columns" % (" ".join(flags) or "(default)",
                                                         "come to read" if engine else "never read"), p)
    t.ok(first == local and [sql_rows(c3, q) for q in STMTS] == local,
         "mcp %s: the same rows as dsight query, before and after" % (" ".join(flags) or "(default)"))
    c3.finish("mcp sql engine %s" % (" ".join(flags) or "(default)"))
r = tap.run([dsight, "mcp", "--sql-engine"], input="")
t.ok(r.returncode == 2 and "usage: dsight mcp [--no-sql-engine]" in r.stderr,
     "mcp: an unknown option is a usage error", r.stderr)

# Version negotiation with an old and an unknown version.
for want_v, got_v in (("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"),
                      ("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-06-18")):
    c2 = Client()
    res = c2.call("initialize", {"protocolVersion": want_v, "capabilities": {}})
    t.eq(res["result"]["protocolVersion"], got_v, "negotiates %s -> %s" % (want_v, got_v))
    res = c2.tool({"dataset": report})["result"]
    if got_v < "2025-06-18":
        t.ok("structuredContent" not in res and res["isError"] is False,
             "%s: no structuredContent before 2025-06-18" % want_v, res)
    else:
        t.ok("structuredContent" in res and res["isError"] is False,
             "%s: structuredContent from 2025-06-18 on" % want_v, res)
    c2.finish("mcp negotiating %s" % want_v)

sys.exit(t.done())

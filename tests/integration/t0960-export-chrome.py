#!/usr/bin/env python3
"""dsight export --format chrome-trace: Trace Event Format JSON whose
events are the rows the query kinds give for the same window (nsys ranges
as X events, metrics points as C events, requests as async slices), on both
backends of the fixture and on a generated capture; usage and data errors
as dsight query prints them; -o writes atomically."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
FIX = tap.FIXTURE
err_of = tap.err_of
US = 1e6


def export(*args):
    return tap.run([DS, "export", *args], timeout=300)


def trace_of(ds, *args):
    r = export(ds, "--format", "chrome-trace", *args)
    if r.returncode != 0:
        return None, r
    return json.loads(r.stdout), r


def paged(ds, kind, *args):
    """Every item of a list kind, page by page."""
    items, off = [], 0
    while True:
        r = tap.query(ds, kind, *args, "--limit", "1000", "--offset", str(off))
        j = json.loads(r.stdout)
        items += j["items"]
        off += 1000
        if off >= j["total"]:
            return items


def window_args(w):
    return ["--from", repr(w[0]), "--to", repr(w[1])] if w else []


def check_trace(label, ds, w=None, extra=(), qextra=(), metric_names=None):
    """The export of ds over window w equals the query kinds' rows there."""
    tr, r = trace_of(ds, *window_args(w), *extra)
    if not t.ok(tr is not None, "%s: exports" % label, r.stderr):
        return None
    evs = tr.get("traceEvents")
    shape = (isinstance(evs, list) and tr.get("displayTimeUnit") == "ms" and
             all(isinstance(e.get("ph"), str) and isinstance(e.get("pid"), int) and
                 isinstance(e.get("tid"), int) and (e["ph"] == "M" or isinstance(e.get("ts"), (int, float)))
                 for e in evs))
    t.ok(shape, "%s: Trace Event Format (traceEvents with ph/ts/pid/tid)" % label)
    # NVTX ranges: X events == nsys rows (profile, name, start, end, rowid, depth, tid)
    xs = sorted((e["pid"], e["name"], e["ts"], e["dur"], e["args"]["source_row"], e["args"]["depth"],
                 e["args"]["global_tid"]) for e in evs if e["ph"] == "X")
    rows = paged(ds, "nsys", *window_args(w), *qextra)
    want = sorted((i["profile"], i["name"] if isinstance(i["name"], str) else "(no name)", i["start"] * US,
                   (i["end"] - i["start"]) * US, i["rowid"], i["depth"], i["global_tid"]) for i in rows)
    t.ok(len(xs) == len(want) and xs == want, "%s: X events are the nsys rows (%d)" % (label, len(want)),
         "%d vs %d; first differing %r" % (len(xs), len(want),
                                           next(((a, b) for a, b in zip(xs, want) if a != b), None)))
    # every X event's thread has its thread_name, its profile a process_name
    named = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
    t.ok(all((e["pid"], e["tid"]) in named and e["pid"] in procs for e in evs if e["ph"] == "X"),
         "%s: every track has its process and thread names" % label)
    # metrics: C events == the points of the series in the window
    cs = sorted((e["name"].split(" \u00b7 ")[0], e["ts"], e["args"]["value"]) for e in evs if e["ph"] == "C")
    series = paged(ds, "metrics", *window_args(w), "--points", *qextra)
    if metric_names is not None:
        series = [s for s in series if s["name"] in metric_names]
    t.ok(not any(s.get("points_truncated") for s in series), "%s: query gave every point" % label)
    wantc = sorted((s["name"], p[0] * US, p[1]) for s in series for p in s["points"] if p[1] is not None)
    t.ok(cs == wantc, "%s: C events are the metrics points (%d)" % (label, len(wantc)),
         "%d vs %d" % (len(cs), len(wantc)))
    # CPU samples: i events == the cache's samples (profile, time, thread, leaf)
    ins = sorted((e["pid"], e["ts"], e["args"]["global_tid"], e["name"], e["args"]["source_row"])
                 for e in evs if e["ph"] == "i")
    pids = sorted({e["pid"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"
                   and e["pid"] < 1000000})
    wants = []
    if pids:
        lo, hi = w if w else (0, json.loads(tap.query(ds, "summary").stdout)["meta"]["duration"])
        # (a document's samples are its built report's: sql needs the cache)
        q = tap.query(rep if ds == FIX else ds, "sql", "--sql", "SELECT profile, time, tid, stack, source_row FROM cpu_samples"
                      " WHERE profile IN (%s) AND time >= %r AND time <= %r" % (",".join(map(str, pids)), lo, hi),
                      "--max-rows", "1000000")
        wants = json.loads(q.stdout)["rows"]
    t.ok(len(ins) == len(wants) and sorted((r[0], r[1] * US, r[2], r[4]) for r in wants) ==
         [(a, b, c, e) for a, b, c, _, e in ins] and all(e["cat"] == "cpu" and e["s"] == "t" and
                                                          e["args"]["stack"][:1] in ([e["name"]], [])
                                                          for e in evs if e["ph"] == "i"),
         "%s: i events are the CPU samples (%d)" % (label, len(wants)), "%d vs %d" % (len(ins), len(wants)))
    return tr


def requests_check(label, ds, tr, w):
    evs = tr["traceEvents"]
    begins = sorted(e["name"] for e in evs if e["ph"] == "b" and e["cat"] == "request" and "args" in e)
    ends = sorted(e["name"] for e in evs if e["ph"] == "e" and e["cat"] == "request"
                  and e["name"] not in ("prefill", "decode"))
    want = paged(ds, "requests", *window_args(w))
    t.ok(begins == ends == sorted(i["id"] for i in want),
         "%s: one async slice per request of the window (%d)" % (label, len(want)), repr((begins, ends)))
    byid = {i["id"]: i for i in want}
    ok = True
    for e in evs:
        if e.get("cat") == "request" and e["ph"] == "b" and "args" in e:
            i = byid.get(e["name"])
            ok = ok and i is not None and e["ts"] == i["start"] * US and e["id"] == "req:" + i["id"]
        if e.get("cat") == "request" and e["name"] == "decode" and e["ph"] == "e":
            ok = ok and byid[e["id"][4:]]["end"] * US == e["ts"]
    t.ok(ok, "%s: request slices start at the request and decode ends with it" % label)


# ---- the fixture: document and built report ----
rep = os.path.join(t.tmp, "report")
b = tap.run([DS, "build", FIX, "-o", rep])
t.ok(b.returncode == 0, "dsight build fixture", b.stderr)
for name, ds in (("document", FIX), ("report", rep)):
    whole = check_trace("fixture %s whole run" % name, ds)
    if whole:
        requests_check("fixture %s whole run" % name, ds, whole, None)
        t.eq(whole["otherData"]["window"], [0.0, 12.0], "fixture %s: window defaults to the run" % name)
    win = check_trace("fixture %s 1..5" % name, ds, (1.0, 5.0))
    if win:
        requests_check("fixture %s 1..5" % name, ds, win, (1.0, 5.0))
    check_trace("fixture %s --profile 0" % name, ds, (1.0, 5.0), ["--profile", "0", "--no-requests"],
                ["--profile", "0", "--worker", "decode-0"])
    tr = check_trace("fixture %s --worker decode-0" % name, ds, None, ["--worker", "decode-0"],
                     ["--worker", "decode-0"])
    tr2 = check_trace("fixture %s --metrics" % name, ds, None,
                      ["--metrics", "gpu_utilization,num_requests_running", "--no-requests"],
                      metric_names={"gpu_utilization", "num_requests_running"})
    if tr2:
        t.ok(not any(e["ph"] in "be" for e in tr2["traceEvents"]), "fixture %s: --no-requests" % name)

# byte-identical on both backends
a, b2 = export(FIX, "--format", "chrome-trace"), export(rep, "--format", "chrome-trace")
t.ok(a.returncode == 0 and a.stdout == b2.stdout, "document and report give the same bytes")

# ---- a generated capture ----
doc = os.path.join(t.tmp, "gen.json")
g = tap.run([tap.binpath("gen-capture"), "--preset", "medium", "--scale", "0.03", "-o", doc])
t.ok(g.returncode == 0, "gen-capture", g.stderr)
grep = os.path.join(t.tmp, "gen-report")
b = tap.run([DS, "build", doc, "-o", grep], timeout=600)
if t.ok(b.returncode == 0, "dsight build generated capture", b.stderr):
    dur = json.loads(tap.query(grep).stdout)["meta"]["duration"]
    w = (dur * 0.3, dur * 0.4)
    tr = check_trace("generated window", grep, w)
    if tr:
        requests_check("generated window", grep, tr, w)
        t.ok(sum(e["ph"] == "X" for e in tr["traceEvents"]) > 100, "generated window has many ranges")

# ---- errors, as dsight query prints them ----
def same_error(args, qargs, code, name):
    r = export(*args)
    q = tap.query(*qargs)
    t.ok(r.returncode == code == q.returncode and r.stdout == "" and err_of(r) == err_of(q)
         and err_of(r).get("ok") is False, name, "export %r / query %r" % (r.stderr, q.stderr))


same_error([FIX, "--format", "chrome-trace", "--from", "5", "--to", "1"],
           [FIX, "nsys", "--from", "5", "--to", "1"], 2, "invalid window: the query kinds' error")
same_error([FIX, "--format", "chrome-trace", "--to", "99"], [FIX, "nsys", "--to", "99"], 2,
           "window past the run: the query kinds' error")
same_error([FIX, "--format", "chrome-trace", "--from", "x"], [FIX, "nsys", "--from", "x"], 2,
           "--from not a number: the query kinds' error")
same_error([os.path.join(t.tmp, "missing"), "--format", "chrome-trace"],
           [os.path.join(t.tmp, "missing"), "nsys"], 1, "missing report: the query kinds' error")


def usage(args, msg, name):
    r = export(*args)
    t.ok(r.returncode == 2 and r.stdout == "" and err_of(r) == {"ok": False, "error": msg}, name, r.stderr)


usage([FIX, "--format", "chrome-trace", "--profile", "7"], "No profile 7; profiles are 0-1.", "unknown profile")
r = export(FIX, "--format", "chrome-trace", "--worker", "nobody")
note = json.loads(tap.query(FIX, "nsys", "--worker", "nobody").stdout)["notes"]
t.ok(r.returncode == 2 and [err_of(r)["error"]] == note, "unknown worker: the query's note as the error",
     "%r vs %r" % (r.stderr, note))
usage([FIX], "Give the format: --format chrome-trace", "--format is required")
usage([FIX, "--format", "csv"], "Unknown format 'csv'; choose from chrome-trace", "unknown format")
usage(["--format", "chrome-trace"], "Give the report: dsight export REPORT --format chrome-trace", "report required")
usage([FIX, "--format", "chrome-trace", "--limit", "3"], "Unknown flag '--limit' (see dsight export --help)",
      "a flag of another command")
h = export("--help")
t.ok(h.returncode == 0 and "--format chrome-trace" in h.stdout and "dsight-export(1)" in h.stdout, "export --help")
h = tap.run([DS, "--help"])
t.ok("export" in h.stdout and "chrome-trace" in h.stdout, "dsight --help lists export")

# ---- -o: same bytes, atomic ----
out = os.path.join(t.tmp, "trace.json")
r = export(FIX, "--format", "chrome-trace", "-o", out)
t.ok(r.returncode == 0 and r.stdout == "" and open(out).read() == a.stdout, "-o FILE: the same bytes as stdout")
mask = os.umask(0)
os.umask(mask)
t.eq(os.stat(out).st_mode & 0o777, 0o666 & ~mask, "-o FILE: the mode a plain create gives (umask)")
with open(out, "w") as f:
    f.write("old")
r = export(FIX, "--format", "chrome-trace", "--from", "5", "--to", "1", "-o", out)
t.ok(r.returncode == 2 and open(out).read() == "old", "-o: a failed export keeps the old file")
t.eq(sorted(os.listdir(t.tmp)).count("trace.json"), 1, "-o: no temporary file left")
t.ok(not any(n.startswith("trace.json.tmp") for n in os.listdir(t.tmp)), "-o: no temporary file after failure")
r = export(FIX, "--format", "chrome-trace", "-o", os.path.join(t.tmp, "nodir", "t.json"))
t.ok(r.returncode == 1 and "Cannot write" in err_of(r).get("error", "") and not os.path.exists(os.path.join(t.tmp, "nodir")),
     "-o into a missing directory: data error, nothing created", r.stderr)
r = tap.run(["sh", "-c", '"$0" export "$1" --format chrome-trace > /dev/full', DS, FIX])
t.ok(r.returncode == 1 and "Cannot write standard output" in r.stderr, "stdout full: a data error", r.stderr)

# a reader that stops early (| head): nothing on stderr, exit 141, as dsight query
r = tap.run(["bash", "-c", 'set -o pipefail; "$0" export "$1" --format chrome-trace | head -c 100 >/dev/null',
             DS, doc])
t.ok(r.returncode == 141 and r.stderr == "", "a reader closing the pipe: exit 141, quietly",
     "rc=%d %r" % (r.returncode, r.stderr))
sys.exit(t.done())

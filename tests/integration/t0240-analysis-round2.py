#!/usr/bin/env python3
"""Round 2 of the analysis parameters, against independent Python
references on both backends (evidence document; SQLite cache with and
without its summaries) and through --remote: depth on nsys rows and the
--min-duration/--max-duration/--max-depth filters (nsys, nsys --group-by,
timeline --of nsys) over random windows; timeline --sort over buckets;
cpu --self; metrics and timeline --of metrics --group-by (math.fsum sums);
--phase keeping the phase's workers; lean profiles; lifecycle notes; the
usage errors."""
import json
import math
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402
from analysisref import buckets, find, keyorder, same, usage_error  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
FIX = tap.FIXTURE
err_of = tap.err_of
rng = random.Random(24)


def q(dataset, *args, env=None):
    return tap.run([DS, "query", dataset, *args], env=env)


# ---- a capture with deep, partly overlapping and identical ranges ----

def nested_doc():
    doc = json.load(open(FIX))
    p = doc["profiles"][0]
    tids = ["1694498927", "1694498928", "None"]
    evs = list(p["events"])
    row = 1000
    for _ in range(400):
        a = rng.choice([rng.randrange(0, 48) / 4, rng.uniform(-0.5, 11.5)])
        d = rng.choice([0.0, 0.25, 0.5, 1.0, 3.0, rng.uniform(0, 2), 9.0])
        evs.append([a, min(a + d, 12.0), rng.randrange(len(p["names"])), rng.choice(tids), row])
        row += 1
    for _ in range(20):  # identical copies
        e = list(rng.choice(evs))
        e[4] = row
        row += 1
        evs.append(e)
    evs.sort(key=lambda e: (e[0], -e[1]))
    p["events"] = evs
    p["event_count"] = len(evs)
    p["truncated"] = False
    return doc


def depths(p):
    evs = p["events"]
    out = []
    for i, r in enumerate(evs):
        n = 0
        for j, a in enumerate(evs):
            if j == i or a[3] != r[3] or not (a[0] <= r[0] and a[1] >= r[1]):
                continue
            if a[0] == r[0] and a[1] == r[1] and j > i:
                continue
            n += 1
        out.append(n)
    return out


def keep(ev, dep, f):
    d = ev[1] - ev[0]
    return ((f.get("min") is None or d >= f["min"]) and (f.get("max") is None or d <= f["max"])
            and (f.get("depth") is None or dep <= f["depth"]))


def flags(f):
    out = []
    for k, flag in (("min", "--min-duration"), ("max", "--max-duration"), ("depth", "--max-depth")):
        if f.get(k) is not None:
            out += [flag, repr(f[k])]
    return out


def ref_rows(doc, deps, s, e, f):
    rows = []
    for k, p in enumerate(doc["profiles"]):
        for i, ev in enumerate(p["events"]):
            if ev[0] <= e and ev[1] >= s and keep(ev, deps[k][i], f):
                rows.append({"profile": p.get("id", k), "start": ev[0], "end": ev[1],
                             "depth": deps[k][i], "rowid": ev[4]})
    rows.sort(key=lambda r: (r["start"], r["profile"], r["rowid"]))
    return rows


def ref_groups(doc, deps, s, e, f):
    groups = {}
    for k, p in enumerate(doc["profiles"]):
        for i, ev in enumerate(p["events"]):
            if ev[0] <= e and ev[1] >= s and keep(ev, deps[k][i], f):
                groups.setdefault(p["names"][ev[2]], []).append(ev)
    items = []
    for key, evs in groups.items():
        durs = [ev[1] - ev[0] for ev in evs]
        items.append({"key": key, "count": len(evs), "duration_total": math.fsum(durs),
                      "duration_max": max(durs), "duration_mean": math.fsum(durs) / len(evs),
                      "clipped_total": math.fsum(min(ev[1], e) - max(ev[0], s) for ev in evs)})
    items.sort(key=lambda g: (-g["clipped_total"], -g["count"], keyorder(g["key"])))
    return items


def ref_nsys_timeline(doc, deps, s, e, w, f):
    b = buckets(s, e, w)
    n = len(b) - 1
    series = []
    for k, p in enumerate(doc["profiles"]):
        ov, act = [0] * n, [[] for _ in range(n)]
        for i, ev in enumerate(p["events"]):
            if not (ev[0] <= e and ev[1] >= s and keep(ev, deps[k][i], f)):
                continue
            for j in range(n):
                if ev[0] <= b[j + 1] and ev[1] >= b[j]:
                    ov[j] += 1
                    act[j].append(min(ev[1], b[j + 1]) - max(ev[0], b[j]))
        series.append({"key": p.get("id", k), "values": {"overlapping": ov,
                                                         "active": [math.fsum(a) for a in act]}})
    return b[:-1], series


def ref_self(doc, s, e):
    counts, total = {}, 0
    for p in doc["profiles"]:
        cpu = p.get("cpu")
        if not isinstance(cpu, dict):
            continue
        for x in cpu["samples"]:
            if not (s <= x[0] <= e):
                continue
            total += 1
            st = cpu["stacks"][x[2]]
            if st and isinstance(st[0], int) and 0 <= st[0] < len(cpu["names"]):
                sym = cpu["names"][st[0]]
                counts[sym] = counts.get(sym, 0) + 1
    items = [{"symbol": k, "samples": v, "fraction": v / total} for k, v in counts.items()]
    items.sort(key=lambda i: (-i["samples"], i["symbol"].encode()))
    return items, total


def mstats(vals_by_series):
    """Group statistics over [series values] (each the non-null points)."""
    pts = [v for vals in vals_by_series for v in vals]
    lo = hi = None
    for v in pts:
        lo = v if lo is None or v < lo else lo
        hi = v if hi is None or v > hi else hi
    means = [math.fsum(float(v) for v in vals) / len(vals) for vals in vals_by_series if vals]
    mean = math.fsum(float(v) for v in pts) / len(pts) if pts else None
    som = math.fsum(means) if means else None
    fin = lambda x: x if x is not None and math.isfinite(x) else None  # noqa: E731
    return len(pts), lo, hi, fin(mean), fin(som)


def metric_groups(doc, field):
    groups = {}
    for m in doc["metrics"]:
        v = m.get(field)
        groups.setdefault(v if isinstance(v, str) else None, []).append(m)
    return sorted(groups.items(), key=lambda kv: keyorder(kv[0]))


def ref_metric_groups(doc, field, s, e):
    items = []
    for key, ms in metric_groups(doc, field):
        vals = [[p[1] for p in m["points"] if s <= p[0] <= e and p[1] is not None] for m in ms]
        n, lo, hi, mean, som = mstats(vals)
        items.append({"key": key, "series": len(ms), "samples": n, "min": lo, "max": hi,
                      "mean": mean, "sum_of_means": som})
    return items


def ref_metric_timeline(doc, field, s, e, w):
    b = buckets(s, e, w)
    n = len(b) - 1
    series = []
    for key, ms in metric_groups(doc, field):
        cols = {k: [] for k in ("series", "samples", "min", "max", "mean", "sum_of_means")}
        for j in range(n):
            vals = [[p[1] for p in m["points"] if p[1] is not None and find(b, p[0]) == j] for m in ms]
            c, lo, hi, mean, som = mstats(vals)
            for k, v in zip(cols, (sum(1 for x in vals if x), c, lo, hi, mean, som)):
                cols[k].append(v)
        series.append({"key": key, "values": cols})
    return b[:-1], series


NOSUM = dict(os.environ, DSIGHT_NO_SUMMARIES="1")


def got(dataset, args, env=None):
    r = q(dataset, *args, env=env)
    return (json.loads(r.stdout) if r.returncode == 0 else {}), r


def check_ranges(label, doc, datasets):
    deps = [depths(p) for p in doc["profiles"]]
    dur = doc["meta"]["duration"]
    wins = [(0.0, float(dur))] + [tuple(sorted(rng.uniform(0, dur) for _ in range(2))) for _ in range(3)]
    filters = [{}, {"depth": 0}, {"depth": 1}, {"max": 1.0}, {"min": 0.5}, {"min": 0.25, "max": 3.0, "depth": 2},
               {"max": 0.0}]
    # the whole run and one random window unless tap.matrix says all
    wins = tap.matrix(wins, wins[:2])
    bad = []
    for ds, env in datasets:
        for s, e in wins:
            win = ["--from", repr(s), "--to", repr(e)]
            for f in filters:
                a = win + flags(f)
                j, r = got(ds, ["nsys", "--limit", "1000", "--fields", "profile,start,end,depth,rowid"] + a, env)
                want = ref_rows(doc, deps, s, e, f)
                if not (same(j.get("items"), want) and j.get("total") == len(want)):
                    bad.append("%s nsys %s: %s" % (ds, a, (r.stdout[:300] + r.stderr)))
                j, r = got(ds, ["nsys", "--group-by", "name", "--limit", "1000"] + a, env)
                want = ref_groups(doc, deps, s, e, f)
                if not (same(j.get("items"), want) and j.get("total") == sum(g["count"] for g in want)):
                    bad.append("%s nsys --group-by name %s: %s" % (ds, a, r.stdout[:300] + r.stderr))
                w = (e - s) / rng.choice([1, 3, 7])
                j, r = got(ds, ["timeline", "--of", "nsys", "--bucket", repr(w), "--limit", "1000"] + a, env)
                b, series = ref_nsys_timeline(doc, deps, s, e, w, f)
                if not (same(j.get("buckets"), b) and same(j.get("series"), series)):
                    bad.append("%s timeline nsys %s --bucket %r: %s" % (ds, a, w, r.stdout[:300] + r.stderr))
    t.ok(not bad, "%s: depth and range filters equal the reference" % label, "\n".join(bad[:3]))


def check_rest(label, doc, datasets):
    dur = doc["meta"]["duration"]
    wins = tap.matrix([(0.0, float(dur)), (dur / 4, dur / 2), (1.0, float(dur) - 1)],
                      [(0.0, float(dur)), (dur / 4, dur / 2)])
    bad = []
    for ds, env in datasets:
        for s, e in wins:
            win = ["--from", repr(s), "--to", repr(e)]
            j, r = got(ds, ["cpu", "--self", "--limit", "1000"] + win, env)
            items, total = ref_self(doc, s, e)
            if not (same(j.get("items"), items) and j.get("total_samples") == total
                    and j.get("mode") == "self"):
                bad.append("%s cpu --self %s: %s" % (ds, win, r.stdout[:300] + r.stderr))
            for field in ("name", "worker", "group", "gpu", "host"):
                j, r = got(ds, ["metrics", "--group-by", field, "--limit", "1000"] + win, env)
                want = ref_metric_groups(doc, field, s, e)
                if not (same(j.get("items"), want) and j.get("total") == len(want)
                        and j.get("group_by") == field):
                    bad.append("%s metrics --group-by %s %s: %s\nwant %s" % (ds, field, win, r.stdout[:300]
                                                                              + r.stderr, want[:1]))
                w = (e - s) / rng.choice([1, 2, 5])
                j, r = got(ds, ["timeline", "--of", "metrics", "--group-by", field, "--bucket", repr(w),
                                "--limit", "1000"] + win, env)
                b, series = ref_metric_timeline(doc, field, s, e, w)
                if not (same(j.get("buckets"), b) and same(j.get("series"), series)):
                    bad.append("%s timeline metrics --group-by %s %s: %s\nwant %s"
                               % (ds, field, win, r.stdout[:300] + r.stderr, series[:1]))
            # top buckets: the plain timeline's one series, sorted here
            for of, extra, keys in (("requests", [], ["-in_flight"]), ("requests", [], ["arrivals", "-start"]),
                                    ("nsys", ["--profile", "0"], ["-active"]),
                                    ("cpu", ["--profile", "1"], ["-samples"]),
                                    ("metrics", ["--name", "num_requests_running"], ["-mean"])):
                w = (e - s) / 9
                args = ["timeline", "--of", of, "--bucket", repr(w)] + extra + win
                plain, r0 = got(ds, args, env)
                j, r = got(ds, args + ["--sort", ",".join(keys), "--limit", "4", "--offset", "1"], env)
                if not plain.get("series"):
                    if plain.get("total") != 0 or j.get("items") != []:
                        bad.append("%s sort on an empty timeline: %s" % (ds, r.stdout + r.stderr))
                    continue
                sr = plain["series"][0]
                bs = plain["buckets"] + [plain["range"][1]]
                rows = [dict({"start": bs[i], "end": bs[i + 1]},
                             **{k: v[i] for k, v in sr["values"].items()}) for i in range(len(bs) - 1)]
                for k in reversed(keys):
                    name, desc = k.lstrip("-"), k.startswith("-")
                    nn = [x for x in rows if x[name] is not None]
                    nn.sort(key=lambda x: x[name], reverse=desc)  # stable either way
                    rows = nn + [x for x in rows if x[name] is None]
                if not (same(j.get("items"), rows[1:5]) and j.get("total") == len(bs) - 1
                        and j.get("key") == sr["key"]):
                    bad.append("%s timeline %s --sort %s: %s\nwant %s" % (ds, of, keys, r.stdout[:300]
                                                                         + r.stderr, rows[1:3]))
    t.ok(not bad, "%s: cpu --self, metric roll-ups and top buckets equal the reference" % label,
         "\n".join(bad[:3]))


nested = os.path.join(t.tmp, "nested.json")
json.dump(nested_doc(), open(nested, "w"))
nrep = os.path.join(t.tmp, "nested-report")
b = tap.run([DS, "build", nested, "-o", nrep])
t.ok(b.returncode == 0, "dsight build of a capture with nested ranges", b.stderr)
ndoc = json.load(open(nested))
check_ranges("nested capture", ndoc, [(nested, None), (nrep, None), (nrep, NOSUM)])
report = os.path.join(t.tmp, "fixture-report")
t.ok(tap.run([DS, "build", FIX, "-o", report]).returncode == 0, "dsight build fixture")
fixture = json.load(open(FIX))
check_rest("fixture", fixture, [(FIX, None), (report, None), (report, NOSUM)])
small = os.path.join(t.tmp, "small.json")
g = tap.run([tap.binpath("gen-capture"), "--preset", "small", "--seed", "3", "-o", small])
if t.ok(g.returncode == 0, "gen-capture small", g.stderr):
    srep = os.path.join(t.tmp, "small-report")
    t.ok(tap.run([DS, "build", small, "-o", srep]).returncode == 0, "dsight build small")
    sdoc = json.load(open(small))
    check_ranges("small capture", sdoc, [(small, None), (srep, None)])
    check_rest("small capture", sdoc, [(small, None), (srep, None), (srep, NOSUM)])

# ---- hand-checked answers on the fixture ----
j, r = got(FIX, ["nsys", "--max-depth", "0", "--fields", "name,depth"])
t.ok(j.get("total") == 5 and all(i["depth"] == 0 for i in j["items"]),
     "--max-depth 0: the outermost ranges only", r.stdout)
j, r = got(FIX, ["timeline", "--bucket", "2", "--sort", "-in_flight", "--limit", "1"])
t.ok(same(j, {"of": "requests", "bucket": 2.0, "key": None, "total": 6, "items": [
    {"start": 4.0, "end": 6.0, "arrivals": 1, "completions": 1, "first_tokens": 1, "in_flight": 2.375,
     "ttft_ms_mean": None}], "offset": 0, "limit": 1, "range": [0.0, 12.0]}),
     "timeline --sort -in_flight --limit 1: the busiest bucket as an item", r.stdout)
r = q(FIX, "timeline", "--of", "metrics", "--bucket", "4", "--name", "gpu_utilization", "--sort", "-max",
      "--fields", "max")
t.ok(r.stdout.startswith('{"of":"metrics","bucket":4.0,"key":2,"total":3,"items":[{"start":4.0,"end":8.0,'
                         '"max":100000000000000000000},{"start":0.0,"end":4.0,"max":18446744073709551615},'),
     "top buckets keep integers beyond 64 bits exact", r.stdout + r.stderr)
j, r = got(FIX, ["cpu"])
t.ok("mode" not in j and j["attribution"].startswith("Inclusive"), "cpu without --self is unchanged")
j, r = got(FIX, ["profiles"])
t.ok(r.returncode == 0 and all("name_definitions" not in i for i in j["items"]),
     "profiles leaves out the name dictionary")
j, r = got(FIX, ["profiles", "--fields", "id,name_definitions"])
t.ok(r.returncode == 0 and "name_definitions" in j["items"][0], "--fields name_definitions brings it back")
j, r = got(FIX, ["lifecycle", "--request", "req-002"])
t.eq(j.get("notes"), ["No server span is joined to request req-002, so it has no lifecycle "
                      "(other requests have one)."], "an unavailable lifecycle says why")
j, r = got(FIX, ["lifecycle", "--request", "req-001"])
t.ok(j.get("available") is True and "notes" not in j, "an available lifecycle has no notes")

# --phase: the phase's workers
j, r = got(FIX, ["nsys", "--request", "req-001", "--phase", "prefill"])
t.ok(j.get("total") == 0 and j["request"]["workers"] == [] and j.get("notes") == [
    "No worker of request req-001 has the prefill role: decode-0 is decode."],
    "--phase prefill on a decode-only request: no worker, a note naming the roles", r.stdout)
j, r = got(FIX, ["nsys", "--request", "req-001", "--phase", "decode", "--limit", "0"])
t.ok(j.get("total") == 5 and j["request"]["workers"] == ["decode-0"] and "notes" not in j,
     "--phase decode keeps the decode worker", r.stdout)
pdoc = json.load(open(FIX))
pdoc["workers"].append({"id": "prefill-0", "role": "prefill", "index": 0, "host": "nodeA", "hosts": ["nodeA"],
                        "process_epochs": [], "profiles": [], "metrics": []})
pdoc["requests"][0]["workers"] = ["prefill-0", "decode-0"]
ppath = os.path.join(t.tmp, "phase.json")
json.dump(pdoc, open(ppath, "w"))
j, r = got(ppath, ["metrics", "--request", "req-001", "--phase", "prefill", "--limit", "0"])
t.ok(j.get("request", {}).get("workers") == ["prefill-0"], "--phase prefill: the prefill worker only",
     r.stdout + r.stderr)
j, r = got(ppath, ["metrics", "--request", "req-001", "--limit", "0"])
t.ok(j.get("request", {}).get("workers") == ["prefill-0", "decode-0"], "--phase whole: every worker")
for w in pdoc["workers"]:
    w["role"] = None
pdoc["requests"][0]["lifecycle"]["activities"] = []
json.dump(pdoc, open(ppath, "w"))
j, r = got(ppath, ["metrics", "--request", "req-001", "--phase", "decode", "--limit", "0"])
t.ok(j.get("request", {}).get("workers") == ["prefill-0", "decode-0"] and j.get("notes") == [
    "No role is known for the workers of request req-001; kept every one for the decode phase."],
    "unknown roles: every worker kept, and notes say so on a non-empty answer", r.stdout + r.stderr)


# ---- validation ----


usage_error(t, [FIX, "nsys", "--max-depth", "-1"], "max_depth must be >= 0", "--max-depth -1")
usage_error(t, [FIX, "nsys", "--max-depth", "x"], "--max-depth must be an integer", "--max-depth x")
usage_error(t, [FIX, "nsys", "--min-duration", "-0.5"], "min_duration must be finite and nonnegative",
            "--min-duration -0.5")
usage_error(t, [FIX, "timeline", "--bucket", "1", "--of", "nsys", "--max-duration", "inf"],
            "max_duration must be finite and nonnegative", "--max-duration inf")
usage_error(t, [FIX, "nsys", "--group-by", "name", "--min-duration", "2", "--max-duration", "1"],
            "Require min_duration <= max_duration", "min above max")
usage_error(t, [FIX, "timeline", "--bucket", "1", "--sort", "-active"],
            "Unknown sort key 'active' for timeline; choose from start, arrivals, completions, "
            "first_tokens, in_flight, ttft_ms_mean", "a sort key of another source")
usage_error(t, [FIX, "timeline", "--bucket", "1", "--of", "nsys", "--sort", "-active"],
            "--sort orders the buckets of one series; this timeline has 2: select one with "
            "--profile, --worker, --rank or --name", "sort over several series")
usage_error(t, [FIX, "metrics", "--group-by", "tid"],
            "Unknown group-by field 'tid' for metrics; choose from name, worker, group, gpu, host",
            "metrics --group-by tid")
usage_error(t, [FIX, "timeline", "--bucket", "1", "--of", "metrics", "--group-by", "profile"],
            "Unknown group-by field 'profile' for timeline; choose from name, worker, group, gpu, host",
            "timeline of metrics --group-by profile")
t.eq(q(FIX, "requests", "--max-depth", "-3").returncode, 0, "a kind without ranges ignores --max-depth")

# ---- warm session: remote == local ----
SETS = [
    ["nsys", "--max-depth", "1", "--min-duration", "0.1", "--limit", "3"],
    ["nsys", "--group-by", "name", "--max-duration", "1"],
    ["timeline", "--of", "nsys", "--bucket", "3", "--max-depth", "0"],
    ["timeline", "--bucket", "2", "--sort", "-in_flight,start", "--limit", "2"],
    ["cpu", "--self"],
    ["metrics", "--group-by", "group"],
    ["timeline", "--of", "metrics", "--group-by", "worker", "--bucket", "4", "--fields", "mean,sum_of_means"],
    ["nsys", "--request", "req-001", "--phase", "prefill"],
    ["profiles"],
    ["lifecycle", "--request", "req-003"],
    ["nsys", "--max-depth", "-1"],
]
try:
    for label, dataset in (("sqlite", report), ("document", FIX)):
        path = os.path.join(t.tmp, label + ".sock")
        s = sl.Server(dataset, "--path", path, "--idle-timeout", "300")
        t.ok(s.alive(), "%s: server started" % label, s.line)
        bad = []
        for args in SETS:
            loc = sl.dsight("query", dataset, *args)
            rem = sl.dsight("query", "--remote", path, *args)
            if (loc.stdout, loc.stderr, loc.returncode) != (rem.stdout, rem.stderr, rem.returncode):
                bad.append("%s: local %d %r / remote %d %r" % (" ".join(args), loc.returncode,
                                                                (loc.stdout + loc.stderr)[:200],
                                                                rem.returncode,
                                                                (rem.stdout + rem.stderr)[:200]))
        t.ok(not bad, "%s: --remote answers like local" % label, "\n".join(bad[:4]))
        s.check(t)
    # ---- MCP and Python: the same engine in process, parameters by name ----
    PY = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import dsight
flag_to_name = {p["flag"]: n for n, p in dsight.PARAMETERS.items() if p.get("flag")}
def params(args):
    kind, out, k = args[0], {}, 1
    while k < len(args):
        name = flag_to_name[args[k]]
        if dsight.PARAMETERS[name]["type"] == "boolean":
            out[name] = True
            k += 1
            continue
        v = args[k + 1]
        typ = dsight.PARAMETERS[name]["type"]
        out[name] = json.loads(v) if typ in ("number", "integer") else v
        k += 2
    return kind, out
ds = dsight.open(sys.argv[2])
res = []
for args in json.loads(sys.argv[3]):
    kind, p = params(args)
    try:
        res.append({"text": ds.query_json(kind, **p), "params": p})
    except dsight.Error as e:
        res.append({"error": str(e), "params": p})
print(json.dumps(res))
"""
    env = tap.sanitizer_preload(dict(
        os.environ, DSIGHT_LIBRARY=os.path.join(tap.BUILD, "lib", "libdsight.so")))
    r = tap.run([sys.executable, "-c", PY, os.path.join(tap.TOP, "client", "python"), report,
                 json.dumps(SETS)], env=env)
    py = json.loads(r.stdout) if r.returncode == 0 else []
    t.ok(len(py) == len(SETS), "python: every set answered or refused", r.stderr[-2000:])
    bad_py, bad_mcp = [], []
    mcp = subprocess.Popen([DS, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    for i, (args, pr) in enumerate(zip(SETS, py)):
        loc = sl.dsight("query", report, *args)
        want = loc.stdout.strip() if loc.returncode == 0 else err_of(loc).get("error")
        if pr.get("text", pr.get("error")) != want:
            bad_py.append("%s: %r / cli %r" % (" ".join(args), pr, want[:200]))
        call = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "query_trace",
                           "arguments": dict(pr["params"], dataset=report, kind=args[0])}}
        mcp.stdin.write(json.dumps(call) + "\n")
        mcp.stdin.flush()
        ans = json.loads(mcp.stdout.readline())["result"]
        text = ans["content"][0]["text"]
        if text.strip() != want or bool(ans.get("isError")) != (loc.returncode != 0):
            bad_mcp.append("%s: %r / cli %r" % (" ".join(args), text[:200], want[:200]))
    mcp.stdin.close()
    mcp.wait(timeout=60)
    t.ok(not bad_py, "python (in process) answers like the CLI on the new parameters",
         "\n".join(bad_py[:4]))
    t.ok(not bad_mcp, "mcp (parameters by name) answers like the CLI on the new parameters",
         "\n".join(bad_mcp[:4]))
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

#!/usr/bin/env python3
"""dsight query --group-by and the timeline kind: answers equal an
independent Python reference (math.fsum sums, nearest-rank percentiles,
bucket edges by comparison) on the fixture and a generated capture, on both
backends; validation messages and exit codes; --remote answers like local."""
import json
import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402
from analysisref import buckets, find, keyorder, same, usage_error  # noqa: E402

t = tap.T()
DS = tap.binpath("dsight")
FIX = tap.FIXTURE
q = tap.query
err_of = tap.err_of


# ---- the reference ----

def overlaps(a, b, s, e):
    return a <= e and b >= s


def nsys_rows(doc, s, e):
    for k, p in enumerate(doc["profiles"]):
        for ev in p["events"]:
            if overlaps(ev[0], ev[1], s, e):
                yield k, p, ev


def nsys_key(field, k, p, ev):
    if field == "name":
        names = p["names"]
        i = ev[2]
        return names[i] if 0 <= i < len(names) and isinstance(names[i], str) else None
    if field == "worker":
        return p.get("worker") if isinstance(p.get("worker"), str) else None
    if field == "profile":
        return p.get("id", k)
    return ev[3]


def ref_nsys_groups(doc, field, s, e):
    groups = {}
    for k, p, ev in nsys_rows(doc, s, e):
        g = groups.setdefault(nsys_key(field, k, p, ev), [])
        g.append(ev)
    items = []
    for key, evs in groups.items():
        durs = [ev[1] - ev[0] for ev in evs]
        total = math.fsum(durs)
        items.append({"key": key, "count": len(evs), "duration_total": total,
                      "duration_max": max(durs), "duration_mean": total / len(evs),
                      "clipped_total": math.fsum(min(ev[1], e) - max(ev[0], s) for ev in evs)})
    items.sort(key=lambda g: (-g["clipped_total"], -g["count"], keyorder(g["key"])))
    return items


def nearest(vals, p):
    """The ceil(p/100 n)-th smallest; among equal values the first in
    default order (vals is stably sorted)."""
    k = max(1, -(-p * len(vals) // 100))
    return next(y for y in vals if y == vals[k - 1])


def stats(vals):
    if not vals:
        return {k: None for k in ("min", "p50", "p90", "p99", "max", "mean")}
    v = sorted(vals)  # stable: equal values keep their order
    return {"min": v[0], "p50": nearest(v, 50), "p90": nearest(v, 90), "p99": nearest(v, 99),
            "max": nearest(v, 100),
            "mean": math.fsum(float(x) for x in vals) / len(vals)}


def tokens(vals):
    vals = [v for v in vals if v is not None]
    if all(isinstance(v, int) for v in vals):
        return sum(vals)
    return math.fsum(float(v) for v in vals)


def ref_request_groups(doc, field, s, e):
    groups = {}
    for r in doc["requests"]:
        if not overlaps(r["start"], r["end"], s, e):
            continue
        if field == "worker":
            ws = [w for w in r.get("workers") or [] if isinstance(w, str)]
            keys = list(dict.fromkeys(ws)) or [None]
        else:
            v = r.get(field)
            keys = [v if isinstance(v, str) else None]
        for key in keys:
            groups.setdefault(key, []).append(r)
    items = []
    for key, rs in groups.items():
        tt = [r["ttft_ms"] for r in rs if r.get("ttft_ms") is not None]
        items.append({"key": key, "count": len(rs), "ttft_ms": stats(tt),
                      "duration": stats([r["end"] - r["start"] for r in rs]),
                      "input_tokens": tokens(r.get("input_tokens") for r in rs),
                      "output_tokens": tokens(r.get("output_tokens") for r in rs)})
    items.sort(key=lambda g: (-g["count"], keyorder(g["key"])))
    return items


def ref_timeline(doc, of, s, e, w, by_name=False):
    b = buckets(s, e, w)
    n = len(b) - 1
    series = []
    if of == "requests":
        cnt = {k: [0] * n for k in ("arrivals", "completions", "first_tokens")}
        flight = [[] for _ in range(n)]
        ttft = [[] for _ in range(n)]
        for r in doc["requests"]:
            if not overlaps(r["start"], r["end"], s, e):
                continue
            for key, t_ in (("arrivals", r["start"]), ("completions", r["end"]),
                            ("first_tokens", r.get("first"))):
                i = find(b, t_) if t_ is not None else None
                if i is not None:
                    cnt[key][i] += 1
                    if key == "arrivals" and r.get("ttft_ms") is not None:
                        ttft[i].append(r["ttft_ms"])
            for i in range(n):
                c = min(r["end"], b[i + 1]) - max(r["start"], b[i])
                if c > 0:
                    flight[i].append(c)
        lens = [b[i + 1] - b[i] for i in range(n)]
        series.append({"key": None, "values": dict(cnt, **{
            "in_flight": [math.fsum(flight[i]) / lens[i] if lens[i] > 0 else None for i in range(n)],
            "ttft_ms_mean": [math.fsum(ttft[i]) / len(ttft[i]) if ttft[i] else None for i in range(n)]})})
    elif of == "nsys":
        def cells(evs):
            ov, act = [0] * n, [[] for _ in range(n)]
            for ev in evs:
                for i in range(n):
                    if ev[0] <= b[i + 1] and ev[1] >= b[i]:
                        ov[i] += 1
                        act[i].append(min(ev[1], b[i + 1]) - max(ev[0], b[i]))
            return {"overlapping": ov, "active": [math.fsum(a) for a in act]}
        if by_name:
            for g in ref_nsys_groups(doc, "name", s, e):
                evs = [ev for k, p, ev in nsys_rows(doc, s, e) if nsys_key("name", k, p, ev) == g["key"]]
                series.append({"key": g["key"], "values": cells(evs)})
        else:
            for k, p in enumerate(doc["profiles"]):
                evs = [ev for ev in p["events"] if overlaps(ev[0], ev[1], s, e)]
                series.append({"key": p.get("id", k), "values": cells(evs)})
    elif of == "cpu":
        for k, p in enumerate(doc["profiles"]):
            if not isinstance(p.get("cpu"), dict):
                continue
            sm = [0] * n
            for x in p["cpu"]["samples"]:
                i = find(b, x[0])
                if i is not None:
                    sm[i] += 1
            series.append({"key": p.get("id", k), "values": {"samples": sm}})
    else:
        for k, m in enumerate(doc["metrics"]):
            vals = [[] for _ in range(n)]
            for pt in m["points"]:
                i = find(b, pt[0])
                if i is not None and pt[1] is not None:
                    vals[i].append(pt[1])
            mn, mx = [], []
            for v in vals:
                lo = hi = v[0] if v else None
                for x in v[1:]:
                    lo = x if x < lo else lo
                    hi = x if x > hi else hi
                mn.append(lo)
                mx.append(hi)
            series.append({"key": m.get("id", k), "values": {
                "samples": [len(v) for v in vals], "min": mn, "max": mx,
                "mean": [math.fsum(float(x) for x in v) / len(v) if v else None for v in vals]}})
    return b[:-1], series


def check_dataset(label, doc, dataset):
    dur = doc["meta"]["duration"]
    windows = [(0.0, float(dur)), (dur / 4, dur / 2), (dur / 3, dur / 3 + dur / 97)]
    bad = []
    for s, e in windows:
        win = ["--from", repr(s), "--to", repr(e)]
        for field in ("name", "worker", "profile", "tid"):
            r = q(dataset, "nsys", "--group-by", field, "--limit", "1000", *win)
            want = ref_nsys_groups(doc, field, s, e)
            got = json.loads(r.stdout) if r.returncode == 0 else {}
            if not (same(got.get("items"), want) and got.get("groups") == len(want)
                    and got.get("total") == sum(g["count"] for g in want)
                    and list(got)[:7] == ["total", "groups", "items", "offset", "limit", "range",
                                          "group_by"]):
                bad.append("nsys --group-by %s %s: %s" % (field, win, r.stdout[:300] + r.stderr))
        for field in ("session", "agent", "worker", "status", "client_kind"):
            r = q(dataset, "requests", "--group-by", field, "--limit", "1000", *win)
            want = ref_request_groups(doc, field, s, e)
            got = json.loads(r.stdout) if r.returncode == 0 else {}
            if not same(got.get("items"), want):
                bad.append("requests --group-by %s %s: %s\nwant %s" % (field, win, r.stdout[:400], want[:2]))
        for w in ((e - s) / 7, 0.3, (e - s) / 1.0001, e - s + 1):
            for of, extra in (("requests", []), ("nsys", []), ("nsys", ["--group-by", "name"]),
                              ("cpu", []), ("metrics", [])):
                r = q(dataset, "timeline", "--bucket", repr(w), "--of", of, "--limit", "1000",
                      *(win + extra))
                b, series = ref_timeline(doc, of, s, e, w, bool(extra))
                got = json.loads(r.stdout) if r.returncode == 0 else {}
                head = ["of", "bucket", "range", "buckets", "total", "offset", "limit", "series"]
                if not (same(got.get("buckets"), b) and same(got.get("series"), series)
                        and got.get("total") == len(series) and list(got)[:8] == head):
                    bad.append("timeline %s %s --bucket %r: %s" % (of, win + extra, w,
                                                                   r.stdout[:400] + r.stderr))
    t.ok(not bad, "%s: group-by and timeline equal the reference" % label, "\n".join(bad[:4]))


report = os.path.join(t.tmp, "fixture-report")
b = tap.run([DS, "build", FIX, "-o", report])
t.ok(b.returncode == 0, "dsight build fixture", b.stderr)
fixture = json.load(open(FIX))
check_dataset("fixture document", fixture, FIX)
check_dataset("fixture cache", fixture, report)
small = os.path.join(t.tmp, "small.json")
g = tap.run([tap.binpath("gen-capture"), "--preset", "small", "-o", small])
if t.ok(g.returncode == 0, "gen-capture small", g.stderr):
    srep = os.path.join(t.tmp, "small-report")
    t.ok(tap.run([DS, "build", small, "-o", srep]).returncode == 0, "dsight build small")
    sdoc = json.load(open(small))
    check_dataset("small document", sdoc, small)
    check_dataset("small cache", sdoc, srep)

# ---- hand-computed answers on the fixture ----
r = q(FIX, "requests", "--group-by", "worker")
j = json.loads(r.stdout)
t.ok(same(j["items"][0], {
    "key": "decode-0", "count": 2,
    "ttft_ms": {"min": 850.5, "p50": 850.5, "p90": 2000.0, "p99": 2000.0, "max": 2000.0,
                "mean": 1425.25},
    "duration": {"min": 5.75, "p50": 5.75, "p90": 7.0, "p99": 7.0, "max": 7.0, "mean": 6.375},
    "input_tokens": 1027, "output_tokens": 128}) and j["items"][1]["key"] is None
    and j["items"][1]["output_tokens"] == 0 and (j["total"], j["groups"]) == (4, 2),
    "requests --group-by worker: nearest-rank statistics, null group last, token sums")
r = q(FIX, "nsys", "--group-by", "name", "--limit", "1")
t.ok(r.stdout.startswith('{"total":10,"groups":6,"items":[{"key":"[Executor] forward step",'
                         '"count":1,"duration_total":13.0,"duration_max":13.0,'
                         '"duration_mean":13.0,"clipped_total":12.0}],"offset":0,"limit":1,'
                         '"range":[0.0,12.0],"group_by":"name","attribution":'),
     "nsys --group-by name: the root range clipped to the window comes first", r.stdout)
r = q(FIX, "timeline", "--bucket", "3")
t.ok(r.stdout.startswith('{"of":"requests","bucket":3.0,"range":[0.0,12.0],'
                         '"buckets":[0.0,3.0,6.0,9.0],"total":1,"offset":0,"limit":100,'
                         '"series":[{"key":null,"values":{"arrivals":[1,2,0,1],'
                         '"completions":[0,1,1,2],"first_tokens":[1,1,0,1],'),
     "timeline --bucket 3: arrivals, completions, first tokens per bucket", r.stdout)
r = q(FIX, "timeline", "--bucket", "0.3", "--to", "0.9")
j = json.loads(r.stdout)
t.eq(j["buckets"], [0.0, 0.3, 0.6, 0.8999999999999999],
     "bucket edges by comparison: 3 * 0.3 < 0.9 makes a fourth, tiny bucket")
r = q(FIX, "timeline", "--bucket", "1", "--limit", "0")
t.ok(json.loads(r.stdout)["series"] == [] and json.loads(r.stdout)["total"] == 1,
     "timeline --limit 0: the series count only")

r = q(FIX, "timeline", "--bucket", "5", "--of", "cpu", "--worker", "decode-0")
t.eq(json.loads(r.stdout).get("notes"),
     ["The selected profiles have no CPU samples. Profiles with CPU samples: 1."],
     "an empty timeline says why, by its source's notes")
r = q(FIX, "requests", "--group-by", "agent", "--sort", "-ttft_ms.p99,key", "--fields", "key,count")
t.eq(json.loads(r.stdout)["items"], [{"key": "agent-A", "count": 1}, {"key": "agent-A/sub-1", "count": 1},
                                     {"key": "sess-Ü", "count": 1}, {"key": "sess-B", "count": 1}],
     "groups sorted by ttft_ms.p99 descending (null last), lean fields")

# a zero-length joined window: one bucket of length 0, in_flight null
zdoc = os.path.join(t.tmp, "zero.json")
z = json.load(open(FIX))
z["requests"][0]["first"] = z["requests"][0]["start"]
z["workers"][0]["role"] = "agg"  # an agg worker serves the prefill too
json.dump(z, open(zdoc, "w"))
r = q(zdoc, "timeline", "--bucket", "1", "--request", z["requests"][0]["id"], "--phase", "prefill")
j = json.loads(r.stdout) if r.returncode == 0 else {}
t.ok(j.get("buckets") == [0.0] and j["series"][0]["values"]["in_flight"] == [None]
     and j["series"][0]["values"]["arrivals"] == [1] and j["request"]["window"] == [0.0, 0.0]
     and list(j)[-1] == "request", "zero-length joined window: one bucket, in_flight null",
     r.stdout + r.stderr)
# 12000 buckets over the run, 5750 over req-002's [3.5, 9.25]
r = q(zdoc, "timeline", "--bucket", "0.001", "--request", z["requests"][1]["id"], "--limit", "0")
t.ok(r.returncode == 0 and len(json.loads(r.stdout)["buckets"]) == 5750,
     "buckets are counted over the joined window", r.stderr)
r = q(zdoc, "timeline", "--bucket", "0.0005", "--request", z["requests"][1]["id"])
t.ok(r.returncode == 2 and err_of(r)["error"] == "Too many buckets; the most is 10000",
     "too many buckets over the joined window", r.stderr)

# ---- validation ----


usage_error(t, [FIX, "timeline"], "timeline needs --bucket SECONDS > 0", "timeline without --bucket")
usage_error(t, [FIX, "timeline", "--bucket", "0"], "timeline needs --bucket SECONDS > 0", "--bucket 0")
usage_error(t, [FIX, "timeline", "--bucket", "-1"], "timeline needs --bucket SECONDS > 0", "--bucket -1")
usage_error(t, [FIX, "timeline", "--bucket", "nan"], "timeline needs --bucket SECONDS > 0", "--bucket nan")
usage_error(t, [FIX, "timeline", "--bucket", "0.001"], "Too many buckets; the most is 10000",
            "12 s in 1 ms buckets")
r = q(FIX, "timeline", "--bucket", "0.001", "--to", "10", "--limit", "0")
t.ok(r.returncode == 0 and len(json.loads(r.stdout)["buckets"]) == 10000,
     "exactly 10000 buckets are allowed", r.stderr)
usage_error(t, [FIX, "timeline", "--bucket", "0", "--of", "nope"], "timeline needs --bucket SECONDS > 0",
            "the bucket is checked before the source")
usage_error(t, [FIX, "timeline", "--bucket", "1", "--of", "nope"],
            "Unknown timeline source 'nope'; choose from requests, nsys, cpu, metrics, gpu", "unknown of")
usage_error(t, [FIX, "timeline", "--bucket", "x"], "--bucket must be a number", "--bucket x")
usage_error(t, [FIX, "nsys", "--group-by", "session"],
            "Unknown group-by field 'session' for nsys; choose from name, worker, profile, tid",
            "nsys --group-by session")
usage_error(t, [FIX, "requests", "--group-by", "name"],
            "Unknown group-by field 'name' for requests; choose from session, agent, worker, "
            "status, client_kind", "requests --group-by name")
usage_error(t, [FIX, "timeline", "--bucket", "1", "--of", "nsys", "--group-by", "tid"],
            "Unknown group-by field 'tid' for timeline; choose from name", "timeline of nsys by tid")
t.eq(q(FIX, "timeline", "--bucket", "1", "--of", "cpu", "--group-by", "tid").returncode, 0,
     "group_by is ignored by a timeline of cpu")
t.eq(q(FIX, "iterations", "--group-by", "tid").stdout, q(FIX, "iterations").stdout,
     "group_by is ignored by a kind that does not group")

# ---- warm session: remote == local ----
SETS = [
    ["nsys", "--group-by", "name"],
    ["nsys", "--group-by", "tid", "--from", "2", "--to", "3", "--limit", "1", "--offset", "1"],
    ["requests", "--group-by", "status"],
    ["timeline", "--bucket", "2.5"],
    ["timeline", "--bucket", "1", "--of", "nsys", "--group-by", "name", "--limit", "2"],
    ["timeline", "--bucket", "4", "--of", "metrics", "--offset", "1", "--limit", "2"],
    ["timeline", "--bucket", "0.5", "--of", "cpu", "--pretty"],
    ["timeline"],
    ["timeline", "--bucket", "0.0001"],
    ["timeline", "--bucket", "1", "--of", "x"],
    ["nsys", "--group-by", "x"],
]
try:
    doc = os.path.join(t.tmp, "ev.json")
    shutil.copy(FIX, doc)
    for label, dataset in (("sqlite", report), ("document", doc)):
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
        t.ok(not bad, "%s: --remote group-by and timeline answer like local" % label, "\n".join(bad[:4]))
        s.check(t)
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

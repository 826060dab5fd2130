#!/usr/bin/env python3
# tests/run: tsan (threads: also run on the ThreadSanitizer build)
"""t0145-single-file-parts: `dsight build --single-file --max-part-size-mb N`.

A capture whose single-file page exceeds a small (fractional) budget is split
by time: parts.json's slices cover [0, duration] without gaps at whole
milliseconds, every part file exists with the size parts.json gives and stays
under the budget, the requests are partitioned by start, the manifest lists
every file; the list page links the parts.  A budget the page fits, and 0,
give today's one-page layout (no parts.json, no part-001); the flag is
refused without --single-file, and for a budget below the viewer itself.
An Nsight export with GPU activity splits the same way, each part carrying
the GPU rows touching its slice: those `dsight query REPORT gpu --from --to`
gives on the directory report of the same export.
The browser side (each part answering exactly inside its slice) is
tests/browser/parts.test.mjs.
"""
import base64
import gzip
import hashlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")
GEN = tap.binpath("gen-capture")


def build(out, *extra):
    return tap.run([DSIGHT, "build", ev, "-o", out] + list(extra))


def files_of(rep):
    out = []
    for dp, _, fns in os.walk(rep):
        for n in fns:
            out.append(os.path.relpath(os.path.join(dp, n), rep))
    return sorted(out)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


ev = os.path.join(t.tmp, "capture.json")
g = tap.run([GEN, "--preset", "medium", "--scale", "0.05", "-o", ev])
t.ok(g.returncode == 0, "gen-capture writes the capture", g.stderr)

# Every part holds the whole viewer and catalog, which grow with the
# viewer: the build names their size when a budget is below it.  The budget
# is that plus 44 KB of rows, so the capture splits into a few parts
# whatever the viewer's size.
probe = build(os.path.join(t.tmp, "probe"), "--single-file", "--max-part-size-mb", "0.01")
base = re.search(r"below the ([0-9.]+) MB of viewer and catalog", probe.stderr)
if not t.ok(probe.returncode == 2 and base, "a budget below the viewer and catalog is refused, "
            "naming their size", probe.stderr):
    sys.exit(t.done())
BUDGET_MB = round(float(base.group(1)) + 0.044, 3)
rep = os.path.join(t.tmp, "split")
r = build(rep, "--single-file", "--max-part-size-mb", str(BUDGET_MB))
if t.ok(r.returncode == 0, "build --single-file --max-part-size-mb %s" % BUDGET_MB, r.stderr):
    line = json.loads(r.stdout)
    pj = json.load(open(os.path.join(rep, "parts.json")))
    parts = pj["parts"]
    summary = json.loads(tap.run([DSIGHT, "query", rep, "summary"]).stdout)
    duration = summary["meta"]["duration"]
    t.ok(pj["version"] == 1 and len(parts) >= 2, "parts.json version 1 with %d parts" % len(parts), pj)
    t.eq(line.get("parts"), len(parts), "the build line counts the parts")
    t.eq([p["file"] for p in parts], ["part-%03d.html" % (i + 1) for i in range(len(parts))],
         "parts are part-001.html, part-002.html, ...")
    t.eq(parts[0]["range"][0], 0.0, "the first slice starts at 0")
    t.eq(parts[-1]["range"][1], duration, "the last slice ends at the duration")
    t.ok(all(parts[i]["range"][1] == parts[i + 1]["range"][0] for i in range(len(parts) - 1)),
         "consecutive slices meet (no gap, no overlap)", [p["range"] for p in parts])
    t.ok(all(p["range"][0] < p["range"][1] for p in parts), "every slice is non-empty")
    cuts = [p["range"][0] for p in parts[1:]]
    t.ok(all(abs(c * 1000 - round(c * 1000)) < 1e-6 for c in cuts), "cuts fall on whole milliseconds", cuts)
    t.ok(all(os.path.getsize(os.path.join(rep, p["file"])) == p["bytes"] for p in parts),
         "each part's bytes in parts.json is its file size")
    t.ok(all(p["bytes"] <= BUDGET_MB * 1e6 for p in parts), "each part is under the budget",
         [p["bytes"] for p in parts])
    t.ok("warning" not in r.stderr, "no oversized-part warning when every slice fits", r.stderr)
    reqs = json.loads(tap.run([DSIGHT, "query", rep, "requests", "--limit", "1000"]).stdout)["items"]
    t.eq(sum(p["requests"] for p in parts), len(reqs), "the parts' request counts add up to every request")
    for i, p in enumerate(parts):
        lo, hi = p["range"]
        want = sum(1 for q in reqs if (i == 0 or q["start"] >= lo) and (i == len(parts) - 1 or q["start"] < hi))
        t.eq(p["requests"], want, "%s counts the requests starting in its slice" % p["file"])
    for kind in ("events", "samples", "points"):
        t.ok(sum(p[kind] for p in parts) >= line["rows"][kind] > 0,
             "every row of %s is in some part (ranges crossing a cut in both)" % kind)
    m = json.load(open(os.path.join(rep, "manifest.json")))
    t.eq(sorted(m["files"]), files_of(rep), "the manifest lists every file of the report")
    t.ok({"index.html", "parts.json", "trace-data.json.gz"} <= set(m["files"]),
         "index.html, parts.json and trace-data.json.gz are in the manifest")
    t.eq(m["html_sha256"], sha(os.path.join(rep, "index.html")), "manifest html_sha256 is the list page's")
    page = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
    t.ok(all('href="%s"' % p["file"] in page for p in parts),
         "the list page links every part relatively")
    t.ok(os.path.getsize(os.path.join(rep, "index.html")) < 64 * 1024, "the list page is small")

one = os.path.join(t.tmp, "one")
plain = os.path.join(t.tmp, "plain")
off = os.path.join(t.tmp, "off")
r1 = build(one, "--single-file", "--max-part-size-mb", "100")
r2 = build(plain, "--single-file")
r3 = build(off, "--single-file", "--max-part-size-mb", "0")
if t.ok(r1.returncode == 0 and r2.returncode == 0 and r3.returncode == 0, "one-page builds succeed",
        r1.stderr + r2.stderr + r3.stderr):
    t.eq(files_of(one), ["index.html", "manifest.json", "trace-data.json.gz"],
         "a page under the budget keeps today's layout (no parts)")
    t.eq(sha(os.path.join(one, "index.html")), sha(os.path.join(plain, "index.html")),
         "and the same index.html as without the flag")
    t.eq(files_of(off), ["index.html", "manifest.json", "trace-data.json.gz"], "0 never splits")
    t.eq(sha(os.path.join(off, "index.html")), sha(os.path.join(plain, "index.html")),
         "0 writes the one-page index.html")
    t.ok("parts" not in json.loads(r1.stdout), "the build line has no parts count without a split")

r = build(os.path.join(t.tmp, "x"), "--max-part-size-mb", "1")
t.ok(r.returncode == 2 and "--single-file" in r.stderr, "the flag without --single-file is a usage error", r.stderr)
for bad in ["-1", "abc", "nan", ""]:
    r = build(os.path.join(t.tmp, "x"), "--single-file", "--max-part-size-mb", bad)
    t.ok(r.returncode == 2 and "--max-part-size-mb" in r.stderr, "--max-part-size-mb %r is refused" % bad, r.stderr)
r = build(os.path.join(t.tmp, "tiny"), "--single-file", "--max-part-size-mb", "0.01")
t.ok(r.returncode != 0 and "every part holds" in r.stderr and not os.path.exists(os.path.join(t.tmp, "tiny", "index.html")),
     "a budget below the viewer and catalog fails clearly and publishes nothing", r.stderr)

# one millisecond holding more than the budget: 60,000 points of one series
# in [5.000, 5.0006) s of the small capture
small = os.path.join(t.tmp, "small.json")
g = tap.run([GEN, "--preset", "small", "-o", small])
doc = json.load(open(small))
series = doc["metrics"][0]
before = [p for p in series["points"] if p[0] < 5.0]
after = [p for p in series["points"] if p[0] > 5.001]
rnd = 12345
dense = []
for i in range(60000):
    rnd = (rnd * 1103515245 + 12345) % 2147483648
    dense.append([5.0 + i * 1e-8, rnd, series["points"][0][2], len(before) + i])
series["points"] = before + dense + [[p[0], p[1], p[2], len(before) + 60000 + j] for j, p in enumerate(after)]
json.dump(doc, open(small, "w"))
drep = os.path.join(t.tmp, "dense")
r = tap.run([DSIGHT, "build", small, "--single-file", "--max-part-size-mb", "0.5", "-o", drep])
if t.ok(r.returncode == 0, "build of a capture with one dense millisecond", r.stderr):
    parts = json.load(open(os.path.join(drep, "parts.json")))["parts"]
    big = [p for p in parts if p["bytes"] > 0.5e6]
    t.ok(len(big) == 1 and big[0]["range"][0] <= 5.0 < big[0]["range"][1] and big[0]["points"] >= 60000,
         "the dense millisecond is kept whole in one part over the budget", parts)
    t.ok(big and ("%s is %.1f MB, over the --max-part-size-mb budget" % (big[0]["file"], big[0]["bytes"] / 1e6)) in r.stderr,
         "the build warns naming that part and its size", r.stderr)
    t.ok(all(p["bytes"] <= 0.5e6 for p in parts if p not in big) and len(parts) >= 2,
         "the other slices stay under the budget", parts)

# GPU rows: each part holds those touching its slice, as the directory
# report of the same export answers them
NSYS = os.path.join(tap.TOP, "scripts", "gen-nsys-export")
exp = os.path.join(t.tmp, "gpu.sqlite")
g = tap.run([sys.executable, NSYS, exp, "--ranges", "2000", "--kernels",
             "12000", "--duration-s", "3"])
t.ok(g.returncode == 0, "gen-nsys-export writes an export with GPU rows", g.stderr)
grep_ = os.path.join(t.tmp, "gpu-split")
gdir = os.path.join(t.tmp, "gpu-dir")
r = tap.run([DSIGHT, "build", "--nsys-sqlite", exp, "--single-file",
             "--max-part-size-mb", "0.6", "-o", grep_])
r2 = tap.run([DSIGHT, "build", "--nsys-sqlite", exp, "-o", gdir])
if t.ok(r.returncode == 0 and r2.returncode == 0,
        "build the export split into parts, and as a directory", r.stderr + r2.stderr):
    parts = json.load(open(os.path.join(grep_, "parts.json")))["parts"]
    t.ok(len(parts) >= 3, "the GPU rows' size splits the export into %d parts" % len(parts))
    FIELDS = ("start,end,correlation,launch_tid,launch_start,nvtx_ordinal,"
              "nvtx_name,rowid")
    total = json.loads(tap.run([DSIGHT, "query", gdir, "gpu", "--limit", "0"]).stdout)["total"]
    for i, p in enumerate(parts):
        lo, hi = p["range"]
        html = open(os.path.join(grep_, p["file"]), encoding="utf-8").read()

        def element(eid):
            m = re.search(r'id="%s">([^<]*)<' % re.escape(eid), html)
            return json.loads(gzip.decompress(base64.b64decode(m.group(1))))
        prof = element("dsight-catalog")["profiles"][0]
        have = []
        for d in prof.get("gpu_chunks", []):
            have += [(x[0], x[1], x[6], x[7], x[8], x[10],
                      None if x[24] is None else prof["names"][x[24]], x[11])
                     for x in element("dsight-shard-" + d["sha256"])]
        want = []
        while True:
            q = json.loads(tap.run([DSIGHT, "query", gdir, "gpu", "--from", repr(lo),
                                    "--to", repr(hi), "--fields", FIELDS, "--limit",
                                    "1000", "--offset", str(len(want))]).stdout)
            want += [tuple(x[f] for f in FIELDS.split(",")) for x in q["items"]]
            if not q["items"] or len(want) >= q["total"]:
                break
        t.ok(have == want and p["gpu"] == len(want) > 0 and
             any(x[6] is not None for x in have),
             "%s: its %d GPU rows are those `gpu --from %s --to %s` answers, in "
             "order, with their launch and NVTX links" % (p["file"], len(have), lo, hi),
             {"have": len(have), "want": len(want), "counted": p["gpu"],
              "first_diff": [(a, b) for a, b in zip(have, want) if a != b][:2]})
    t.ok(sum(p["gpu"] for p in parts) >= total > 0,
         "every GPU row is in some part (rows crossing a cut in both)")
    page = open(os.path.join(grep_, "index.html"), encoding="utf-8").read()
    t.ok("<th>GPU rows</th>" in page and all(
        "<td>%d</td></tr>" % p["gpu"] in page for p in parts),
        "the list page gives each part's GPU rows")

sys.exit(t.done())

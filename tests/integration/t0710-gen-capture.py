#!/usr/bin/env python3
"""gen-capture: valid, deterministic evidence with every edge case; usage errors."""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
gen = tap.binpath("gen-capture")
check = os.path.join(tap.TOP, "scripts", "check-capture")


def path(name):
    return os.path.join(t.tmp, name)


def generate(name, *args):
    r = tap.run([gen, *args, "-o", path(name)])
    return r


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


r = tap.run([gen, "--help"])
t.ok(r.returncode == 0 and "--preset" in r.stdout and "--scale" in r.stdout, "--help prints usage")

for preset in ("small", "medium"):
    r = generate(preset + ".json", "--preset", preset)
    t.eq(r.returncode, 0, "%s: generated" % preset)
    c = tap.run([check, "--edge-cases", path(preset + ".json")])
    t.ok(c.returncode == 0, "%s: valid and carries every edge case" % preset, c.stdout + c.stderr)

doc = json.loads(read("small.json"))
t.eq(doc["schema"], "srtctl-trace/1", "small: schema")
t.eq(doc["audit"]["nsight_selected_events"], sum(len(p["events"]) for p in doc["profiles"]),
     "small: audit counts the events")
med = json.loads(read("medium.json"))
t.eq(sum(len(p["events"]) for p in med["profiles"]), 100000, "medium: 100,000 NVTX ranges")
t.eq(sum(len(s["points"]) for s in med["metrics"]), 200000, "medium: 200,000 metric points")
del med

generate("small2.json", "--preset", "small")
t.ok(read("small.json") == read("small2.json"), "same preset and seed: identical bytes")
generate("seed7.json", "--preset", "small", "--seed", "7")
t.ok(read("small.json") != read("seed7.json"), "another seed: different bytes")
c = tap.run([check, "--edge-cases", path("seed7.json")])
t.ok(c.returncode == 0, "seed 7: valid", c.stdout)

generate("small.json.gz", "--preset", "small", "--gzip")
t.ok(gzip.decompress(read("small.json.gz")) == read("small.json"), "--gzip: same document, compressed")

generate("x2.json", "--preset", "small", "--scale", "2")
x2 = json.loads(read("x2.json"))
t.eq(sum(len(p["events"]) for p in x2["profiles"]),
     2 * sum(len(p["events"]) for p in doc["profiles"]), "--scale 2 doubles the events")
t.eq(sum(len(p["cpu"]["samples"]) for p in x2["profiles"] if p.get("cpu")),
     2 * sum(len(p["cpu"]["samples"]) for p in doc["profiles"] if p.get("cpu")),
     "--scale 2 doubles the CPU samples")

for args, code, what in ((["--preset", "huge", "-o", path("h.json")], 2, "unknown preset"),
                         (["--preset", "small"], 2, "missing -o"),
                         (["--preset", "small", "--scale", "0", "-o", path("z.json")], 2, "scale 0"),
                         (["--preset", "small", "--seed", "x", "-o", path("z.json")], 2, "bad seed"),
                         (["--bogus"], 2, "unknown flag"),
                         (["--preset", "small", "-o", path("no/such/dir.json")], 1, "unwritable output")):
    r = tap.run([gen, *args])
    t.ok(r.returncode == code and r.stderr.startswith("gen-capture: "), "%s: exit %d with a message" % (what, code),
         "rc=%d stderr=%r" % (r.returncode, r.stderr))

# The validator must be able to fail: swap two events of a profile.
bad = json.loads(read("small.json"))
ev = bad["profiles"][0]["events"]
ev[2], ev[3] = ev[3], ev[2]
bad["requests"].append(dict(bad["requests"][0]))
with open(path("bad.json"), "w") as f:
    json.dump(bad, f)
c = tap.run([check, path("bad.json")])
t.ok(c.returncode == 1 and "out of order" in c.stdout and "duplicate request ids" in c.stdout,
     "check-capture rejects out-of-order events and duplicate ids", c.stdout)

# The demo capture is coherent: a "fraction" stays in [0, 1], a request that
# says a span ends after the client has one, every family has a series.
for sr in doc["metrics"]:
    if sr["unit"] == "fraction":
        t.ok(all(p[1] is None or 0 <= p[1] <= 1 for p in sr["points"]), "series %d: fractions in [0, 1]" % sr["id"])
late = [r for r in doc["requests"] if "Client end precedes the last server span end." in r["issues"]]
t.ok(late and all(max(sp["end"] for sp in r["spans"]) > r["end"] for r in late),
     "the late-span issue marks requests whose span ends after the client")
t.ok(all(c["series_count"] > 0 for c in doc["metric_catalog"]), "every metric family has series")
t.ok(sum(1 for p in doc["profiles"] if p.get("cpu") and p["cpu"]["samples"]) == len(doc["profiles"]) - 1,
     "every profile but the first has CPU samples")
incoherent = json.loads(read("small.json"))
frac = next(sr for sr in incoherent["metrics"] if sr["unit"] == "fraction")
frac["points"][0][1] = 350.0
nospan = next(r for r in incoherent["requests"] if not r["spans"])
nospan["issues"].append("Client end precedes the last server span end.")
with open(path("incoherent.json"), "w") as f:
    json.dump(incoherent, f)
c = tap.run([check, path("incoherent.json")])
t.ok(c.returncode == 1 and "outside [0, 1]" in c.stdout and "none does" in c.stdout,
     "check-capture rejects a fraction of 350 and a late-span issue without spans", c.stdout)

sys.exit(t.done())

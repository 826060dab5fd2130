#!/usr/bin/env python3
"""bench-evidence: the reader benchmark tool runs and reports honest counts
on plain, gzip and legacy-directory inputs, and fails cleanly on bad input."""
import gzip
import json
import os
import shutil
import sys

import tap

t = tap.T()
tool = tap.binpath("bench-evidence")

with open(tap.FIXTURE, "rb") as f:
    raw = f.read()
gz = os.path.join(t.tmp, "doc.bin")  # gzip without a .gz name
with open(gz, "wb") as f:
    f.write(gzip.compress(raw))
legacy = os.path.join(t.tmp, "legacy")
os.mkdir(legacy)
shutil.copy(gz, os.path.join(legacy, "trace-data.json.gz"))

for label, path, size in (("plain", tap.FIXTURE, len(raw)),
                          ("gzip", gz, os.path.getsize(gz)),
                          ("legacy directory", legacy, os.path.getsize(gz))):
    r = tap.run([tool, "--repeat", "2", path])
    t.ok(r.returncode == 0, f"{label}: exit 0", r.stderr)
    lines = r.stdout.splitlines()
    t.eq(len(lines), 2, f"{label}: one JSON line per run")
    try:
        rec = json.loads(lines[0])
    except (ValueError, IndexError):
        rec = {}
    t.eq(rec.get("rows"), 38, f"{label}: 10 events + 5 samples + 23 points")
    t.eq(rec.get("input_bytes"), size, f"{label}: input bytes are the file's")
    t.ok(isinstance(rec.get("cpu_s"), float) and rec.get("wall_s", 0) > 0,
         f"{label}: times reported")

bad = os.path.join(t.tmp, "bad.json")
with open(bad, "wb") as f:
    f.write(raw.replace(b'"schema": "srtctl-trace/1"', b'"schema": "srtctl-trace/9"', 1))
r = tap.run([tool, bad])
t.eq(r.returncode, 1, "invalid document: exit 1")
t.ok("schema: expected \"srtctl-trace/1\"" in r.stderr and r.stdout == "",
     "invalid document: one error line naming the path", r.stderr)
r = tap.run([tool])
t.eq(r.returncode, 2, "no file: usage error")

sys.exit(t.done())

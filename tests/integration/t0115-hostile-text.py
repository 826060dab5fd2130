#!/usr/bin/env python3
"""t0115-hostile-text: bad text never publishes a broken report.

Evidence documents: invalid UTF-8 (overlong forms, encoded surrogates, code
points above U+10FFFF) and lone surrogate escapes are errors naming the JSON
path, leaving the previous report and no staging; \\u0000 round-trips; a
string over 64 MiB (a gzip bomb) is a quick clear error.  Nsight exports:
invalid text becomes U+FFFD (counted in audit.nsight_invalid_text), NUL
stays U+0000, and the report reads back and rebuilds.  The build re-opens
what it staged before publishing (DSIGHT_TEST_DAMAGE_STAGED damages a staged
file).  Error messages cut inside a UTF-8 character stay valid UTF-8, the
same locally and through a warm session, and in MCP errors.
"""
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
import sessionlib  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")

with open(tap.FIXTURE, "rb") as f:
    FIXTURE = f.read()




def doc_with_job(raw):
    """The fixture with meta.job's value replaced by raw JSON string bytes."""
    return FIXTURE.replace(b'"example-run"', b'"' + raw + b'"', 1)


def write(name, data):
    p = os.path.join(t.tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def build(src, out, *extra, env=None):
    return tap.run([DSIGHT, "build", src, "-o", out] + list(extra), env=env,
                   timeout=300)


def query(rep, *args):
    return subprocess.run([DSIGHT, "query", rep] + list(args), capture_output=True,
                          timeout=120)


def valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


base = os.path.join(t.tmp, "out")
os.makedirs(base)
rep = os.path.join(base, "rep")
r = build(tap.FIXTURE, rep)
t.ok(r.returncode == 0, "a good report to protect", r.stderr)


def refused(name, src, want, *extra, env=None):
    before = tap.tree_state(base)
    r = build(src, rep, *extra, env=env)
    lines = r.stderr.splitlines()
    t.ok(r.returncode == 1 and len(lines) == 1 and want in r.stderr,
         "%s: one line naming it, exit 1" % name, (r.returncode, r.stderr[:400]))
    t.ok(tap.tree_state(base) == before, "%s: previous report unchanged, no staging" % name,
         sorted(set(tap.tree_state(base)) ^ set(before))[:5])
    q = query(rep, "summary")
    t.ok(q.returncode == 0 and json.loads(q.stdout)["meta"]["job"] == "example-run",
         "%s: the previous report still answers" % name, q.stderr)


# ---- invalid text in an evidence document: errors naming the JSON path ----
CASES = [
    ("overlong C0 AF", b"a\xc0\xafb", "meta.job: invalid UTF-8 (an overlong form)"),
    ("overlong C1 80", b"a\xc1\x80b", "meta.job: invalid UTF-8 (an overlong form)"),
    ("overlong E0 80 80", b"a\xe0\x80\x80b", "meta.job: invalid UTF-8 (an overlong form)"),
    ("above U+10FFFF", b"a\xf4\x90\x80\x80b", "meta.job: invalid UTF-8 (a code point above U+10FFFF)"),
    ("encoded surrogate", b"a\xed\xa0\x80b", "meta.job: invalid UTF-8 (an encoded surrogate)"),
    ("lone high surrogate escape", b"a\\ud800b", "meta.job: invalid UTF-8 (a lone surrogate \\u escape)"),
    ("high surrogate + non-low escape", b"a\\ud800\\u0041", "meta.job: invalid UTF-8 (a lone surrogate"),
    ("lone low surrogate escape", b"\\udc00", "meta.job: invalid UTF-8 (a lone surrogate"),
]
for name, raw, want in CASES:
    refused(name, write("bad.json", doc_with_job(raw)), want)
# in a key, inside a streamed row, and in a gzip document
refused("surrogate escape in a key",
        write("badkey.json", FIXTURE.replace(b'"phase"', b'"ph\\ud800ase"', 1)),
        "invalid UTF-8 (a lone surrogate")
doc = json.loads(FIXTURE)
doc["profiles"][0]["events"][0][3] = "@TID@"
refused("overlong form in an event's thread id",
        write("badrow.json", json.dumps(doc).encode().replace(b'"@TID@"', b'"\xc0\xaf"')),
        "profiles[0].events[0][3]: invalid UTF-8 (an overlong form)")
refused("lone surrogate in a gzip document",
        write("bad.json.gz", gzip.compress(doc_with_job(b"\\udbff"))),
        "meta.job: invalid UTF-8 (a lone surrogate")

# ---- \u0000 is a character like any other ----
nul = write("nul.json", doc_with_job(b"a\\u0000b\\ud83d\\ude00"))
r = build(nul, rep)
t.ok(r.returncode == 0, "\\u0000 in a string builds", r.stderr)
q = query(rep, "summary")
t.ok(q.returncode == 0 and b'"job":"a\\u0000b\xf0\x9f\x98\x80"' in q.stdout,
     "\\u0000 round-trips exactly (printed \\u0000)", q.stdout[:200])
with open(os.path.join(rep, "manifest.json"), "rb") as f:
    t.ok(b'a\\u0000b' in f.read(), "the manifest keeps \\u0000 escaped")
r = build(nul, rep)
t.ok(r.returncode == 0, "rebuilding the same output works", r.stderr)
r = build(nul, rep, "--single-file")
t.ok(r.returncode == 0 and query(rep, "summary").returncode == 0,
     "single-file report with \\u0000 reads back", r.stderr)
r = build(tap.FIXTURE, rep)
t.ok(r.returncode == 0, "back to the plain fixture", r.stderr)

# ---- a string over 64 MiB: a gzip bomb is refused quickly ----
def bomb(mib):
    head, tail = FIXTURE.split(b'"example-run"', 1)
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [co.compress(head + b'"')]
    chunk = b"x" * (1 << 20)
    for _ in range(mib):
        parts.append(co.compress(chunk))
    parts.append(co.compress(b'"' + tail))
    parts.append(co.flush())
    return b"".join(parts)


big = write("bomb.json.gz", bomb(65))
t0 = time.monotonic()
refused("a 65 MiB string (gzip bomb)", big, "meta.job: a string longer than 64 MiB")
print("# the bomb was refused in %.1f s" % (time.monotonic() - t0))

# ---- the build reads back what it staged before publishing ----
for f in ("manifest.json", "trace-data.sqlite"):
    refused("staged %s damaged" % f, tap.FIXTURE,
            "refusing to publish: the new report does not read back",
            env=dict(os.environ, DSIGHT_TEST_DAMAGE_STAGED=f))
# a --single-file report's document is read back row by row, not loaded
refused("staged trace-data.json.gz damaged (--single-file)", tap.FIXTURE,
        "refusing to publish: the new report does not read back",
        "--single-file",
        env=dict(os.environ, DSIGHT_TEST_DAMAGE_STAGED="trace-data.json.gz"))
r = build(tap.FIXTURE, rep)
t.ok(r.returncode == 0, "a build after a refused one publishes", r.stderr)

# ---- Nsight text: U+FFFD where invalid, NUL kept, counted ----
GEN = os.path.join(tap.TOP, "scripts", "gen-nsys-export")
exp = os.path.join(t.tmp, "exports", "nodeA_decode_w0_profile_rank0.sqlite")
os.makedirs(os.path.dirname(exp))
g = tap.run([sys.executable, GEN, exp, "--schema-only", "--threads", "1",
             "--duration-s", "10", "--no-hostname", "--no-cuda"])
t.ok(g.returncode == 0, "gen-nsys-export", g.stderr)
db = sqlite3.connect(exp)
db.execute("DELETE FROM StringIds")
db.execute("DELETE FROM ThreadNames")
db.execute("INSERT INTO StringIds VALUES (1, CAST(X'6964C0AF00' AS TEXT))")   # id C0 AF NUL
db.execute("INSERT INTO StringIds VALUES (2, CAST(X'74EDA080' AS TEXT))")
gt = (101 << 24) | 111
db.execute("INSERT INTO ThreadNames VALUES (2, 0, ?)", (gt,))
rows = [(1, 1_000_000_000, 2_000_000_000, None, 1, gt),
        (2, 3_000_000_000, 4_000_000_000, None, None, gt),
        (3, 5_000_000_000, 6_000_000_000, None, None, gt)]
db.executemany("INSERT INTO NVTX_EVENTS (rowid, start, end, eventType, text, textId, "
               "globalTid) VALUES (?,?,?,59,?,?,?)", rows)
db.execute("UPDATE NVTX_EVENTS SET text = CAST(X'7374657000E282' AS TEXT) WHERE rowid = 2")
db.execute("UPDATE NVTX_EVENTS SET text = CAST(X'6F6BF4908080' AS TEXT) WHERE rowid = 3")
db.commit()
db.close()
nrep = os.path.join(base, "nsys")
r = tap.run([DSIGHT, "build", "--nsys-sqlite", exp, "-o", nrep])
t.ok(r.returncode == 0, "an export with invalid text and NUL builds", r.stderr)
q = query(nrep, "nsys", "--limit", "10")
names = sorted(i["name"] for i in json.loads(q.stdout)["items"]) if q.returncode == 0 else None
t.eq(names, ["id\ufffd\ufffd\u0000", "ok\ufffd\ufffd\ufffd\ufffd", "step\u0000\ufffd"],
     "range names: U+FFFD per maximal subpart, NUL kept")
s = json.loads(query(nrep, "summary").stdout)
t.eq(s["audit"].get("nsight_invalid_text"), 2 + 1 + 4 + 3,
     "audit.nsight_invalid_text counts every replacement (names and thread name)")
thr = json.loads(query(nrep, "profiles").stdout)["items"][0]["threads"]
t.eq([x["name"] for x in thr], ["t\ufffd\ufffd\ufffd"], "thread name repaired")
r = tap.run([DSIGHT, "build", "--nsys-sqlite", exp, "-o", nrep])
t.ok(r.returncode == 0, "rebuilding the Nsight report works", r.stderr)

# a corrupt export whose SQLite error quotes invalid UTF-8 (found by
# tests/fuzz/fuzz_nsys): the message is repaired, never invalid UTF-8
bad = os.path.join(t.tmp, "corrupt", "nodeA_decode_w0_profile_rank0.sqlite")
os.makedirs(os.path.dirname(bad))
with open(os.path.join(tap.TOP, "tests", "fuzz", "corpus", "nsys",
                       "regress-corrupt-schema-invalid-utf8.sqlite"), "rb") as f:
    write(bad, f.read())
r = subprocess.run([DSIGHT, "build", "--nsys-sqlite", bad, "-o", os.path.join(base, "c")],
                   capture_output=True, timeout=120)
t.ok(r.returncode == 1 and valid_utf8(r.stderr) and b"corrupt SQLite export" in r.stderr
     and b"\xef\xbf\xbd" in r.stderr, "corrupt export: a UTF-8 message with U+FFFD", r.stderr[:300])

# ---- error messages cut inside a character stay UTF-8, local == remote ----
LONG = "Ü" * 1000
loc = subprocess.run([DSIGHT, "query", rep, "request", "--request", LONG],
                     capture_output=True, timeout=60)
t.ok(loc.returncode == 2 and valid_utf8(loc.stderr) and loc.stderr.startswith(b'{"ok": false'),
     "local: exit 2, stderr valid UTF-8", loc.stderr[-80:])
srv = sessionlib.Server(rep, "--path", os.path.join(t.tmp, "s.sock"))
try:
    t.ok(srv.path is not None, "a warm session", srv.line)
    rem = subprocess.run([DSIGHT, "query", "--remote", srv.path, "request", "--request", LONG],
                         capture_output=True, timeout=60)
    t.ok(rem.returncode == 2, "remote: exit 2", (rem.returncode, rem.stderr[-200:]))
    t.eq(rem.stderr, loc.stderr, "remote stderr byte-identical to local")
    # a frame whose error quotes a cut multibyte method name
    c = sessionlib.Conn(srv.path)
    for pad in ("", "x"):  # the cut falls inside a character either way
        c.send(pad + "é" * 120)
        body = c.recv_bytes()
        t.ok(valid_utf8(body), "unknown method %r...: the reply frame is UTF-8" % pad, body[:120])
        reply = json.loads(body)
        msg = reply.get("error", {}).get("message", "")
        t.ok(reply.get("error", {}).get("code") == -32601 and "\ufffd" not in msg and
             msg.startswith("Unknown method '" + pad + "éé"),
             "unknown method %r...: the quoted name is cut on a character" % pad, msg[:80])
    c.s.close()
finally:
    srv.stop()
    sessionlib.cleanup()

mcp = subprocess.run([DSIGHT, "mcp"], input=(json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "ü" * 300, "arguments": {}}}) + "\n").encode(),
    capture_output=True, timeout=60)
t.ok(valid_utf8(mcp.stdout) and b"Unknown tool: " in mcp.stdout,
     "MCP: an error quoting a long name is valid UTF-8", mcp.stdout[:200])

sys.exit(t.done())

#!/usr/bin/env python3
# tests/run: tsan (threads: also run on the ThreadSanitizer build)
"""t0130-nsys-import: `dsight build --nsys-sqlite` on crafted Nsight exports.

The exports are made here (scripts/gen-nsys-export --schema-only gives the
real export schema, then the test inserts its own rows).  Every expected
answer is computed in this file from the crafted rows (Python integers,
one final division by 1e9), never from the importer's output: the
`profiles`, `nsys`, `cpu` and `summary` queries, the source inventory, the
cap at N and N+1, errors and warnings, appending to an evidence document,
and that the exports' bytes and mtimes are unchanged by a build.
"""
import hashlib
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")
GEN = os.path.join(tap.TOP, "scripts", "gen-nsys-export")

EPOCH = 1790000000123456789
SYSCLK = 777000000000
CAP = (SYSCLK + 0, SYSCLK + 10_000_000_000)  # system clock: 10 s capture


def gtid(pid, tid):
    return (pid << 24) | tid


def make_export(path, ranges, samples=(), frames=(), strings=(),
                thread_names=(), epoch=EPOCH, sysclk=SYSCLK, extra=(),
                gen_args=()):
    """ranges: (rowid, start, end, text, textId, globalTid), session-relative."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    r = tap.run([sys.executable, GEN, path, "--schema-only", "--threads", "1",
                 "--epoch-ns", str(epoch), "--system-clock-ns", str(sysclk),
                 "--duration-s", "10", "--no-hostname"] + list(gen_args))
    assert r.returncode == 0, r.stderr
    db = sqlite3.connect(path)
    db.execute("DELETE FROM StringIds")
    db.execute("DELETE FROM ThreadNames")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", strings)
    db.executemany("INSERT INTO ThreadNames VALUES (?, 0, ?)", thread_names)
    db.executemany("INSERT INTO NVTX_EVENTS (rowid, start, end, eventType, "
                   "text, textId, globalTid) VALUES (?,?,?,59,?,?,?)", ranges)
    db.executemany("INSERT INTO COMPOSITE_EVENTS VALUES (?, ?, 0, 0, ?, 1)",
                   samples)
    db.executemany("INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, "
                   "unresolved, unwindMethod, stackDepth) VALUES "
                   "(?, ?, 1, ?, 1, ?)", frames)
    for sql in extra:
        db.execute(sql)
    db.commit()
    db.close()


def fingerprint(path):
    st = os.stat(path)
    with open(path, "rb") as f:
        return (st.st_size, st.st_mtime_ns, hashlib.sha256(f.read()).hexdigest())


def build(args, out):
    return tap.run([DSIGHT, "build"] + args + ["-o", out])


def query(report, *args):
    r = tap.run([DSIGHT, "query", report] + list(args))
    try:
        return json.loads(r.stdout), r
    except ValueError:
        return None, r


# ---------------------------------------------------------------- exports
D = os.path.join(t.tmp, "exports")
STRINGS = [(1, "from-id"), (2, "main"), (3, "poll"), (4, "0x7f00"),
           (5, "tokenize"), (6, "executor-thread")]
G1, G2, G3 = gtid(101, 111), gtid(101, 112), gtid(7, 1)
# (rowid, start, end, text, textId, globalTid)
RANGES_A = [
    (1, 5_000_000_000, 6_000_000_000, "step", None, G1),
    (2, 1_000_000_001, 1_000_000_001, None, 1, G1),      # zero length, textId
    (3, 1_000_000_001, 2_000_000_000, None, None, None),  # tie: longer first
    (4, 2_000_000_000, None, "mark", None, G1),           # NULL end
    (5, 3_000_000_000, 2_000_000_000, "bad", None, G1),   # end < start
    (6, -5, 100, "early", None, G1),                      # before the capture
    (7, 9_000_000_000, 10_000_000_001, "late", None, G1),  # after the capture
    (8, 7_000_000_000, 7_500_000_000, "from-id", 5, G2),  # text wins
    (9, 7_000_000_000, 7_500_000_000, "step", None, G1),  # tie: rowid order
    (10, 0, 10_000_000_000, "Ünicode root", None, G1),
]
# CPU samples on the frontend export: (id, start, globalTid)
SAMPLES = [(20, 3_000_000, G3), (21, 1_000_000, G3), (22, 2_000_000, G3)]
FRAMES = [  # (id, symbol, unresolved, stackDepth), inserted out of order
    (21, 3, 0, 1), (21, 2, 0, 0), (21, 3, 0, 2),
    (22, 4, 1, 0), (22, 2, 0, 1),
    (20, 5, 0, 1), (20, 2, 0, 0),
]
RANGES_F = [(1, 500_000_000, 700_000_000, "route", None, G3)]

A = os.path.join(D, "nodeA_decode_w0_profile_rank0.sqlite")
F = os.path.join(D, "sub", "nodeF_frontend_0.sqlite")
make_export(A, RANGES_A, strings=STRINGS, thread_names=[(6, G1)])
make_export(F, RANGES_F, SAMPLES, FRAMES, STRINGS, epoch=EPOCH + 250_000_000,
            sysclk=0, gen_args=["--no-system-clock", "--no-cuda"])
before = {p: fingerprint(p) for p in (A, F)}


def expected_events(ranges, epoch, cap_rel, origin):
    """The importer's contract computed independently: valid, contained,
    ordered by (start, end desc, rowid); names first-seen; times exact."""
    sid = dict(STRINGS)
    kept = [r for r in ranges if r[2] is not None and r[2] >= r[1]
            and r[1] >= cap_rel[0] and r[2] <= cap_rel[1]]
    kept.sort(key=lambda r: (r[1], -r[2], r[0]))
    names, rows = [], []
    for rowid, s, e, text, tid_, g in kept:
        name = text if text is not None else sid.get(tid_, "")
        if name not in names:
            names.append(name)
        rows.append(((epoch + s - origin) / 1e9, (epoch + e - origin) / 1e9,
                     name, "None" if g is None else str(g), rowid))
    return names, rows


# ------------------------------------------------- Nsight-only report
R1 = os.path.join(t.tmp, "r1")
r = build(["--nsys-sqlite", D, "--job", "nsjob"], R1)
t.eq(r.returncode, 0, "nsight-only build succeeds")
if r.returncode:
    print("# " + r.stderr)
for p in (A, F):
    t.eq(fingerprint(p), before[p], "export unchanged by the build: %s"
         % os.path.basename(p))
    t.ok(not os.path.exists(p + "-journal") and not os.path.exists(p + "-wal"),
         "no side file beside %s" % os.path.basename(p))

# origin = earliest capture start: A's session start (capture starts at
# systemClockNs exactly); F's capture starts 0.25 s later.
ORIGIN = EPOCH
summ, _ = query(R1, "summary")
summ = summ or {}
meta = summ.get("meta") or {}
t.eq(meta.get("origin_ns"), str(ORIGIN), "origin is the earliest capture start")
t.eq(meta.get("job"), "nsjob", "--job names the run")
t.eq(meta.get("duration"), (EPOCH + 250_000_000 + 10_000_000_000 - ORIGIN) / 1e9,
     "duration is the union of the capture bounds")
t.ok("Nsight capture" in (meta.get("time_basis") or ""),
     "time_basis says the window is the Nsight capture")
audit = summ.get("audit", {})
t.eq((audit.get("nvtx_without_end"), audit.get("nvtx_invalid_or_boundary"),
      audit.get("nsight_reports")), (1, 3, 2), "audit counters")
caps = summ.get("capabilities", {})
t.eq((caps.get("nvtx"), caps.get("cpu_samples"), caps.get("nsight"),
      caps.get("requests")), (True, True, True, False), "capabilities")

names_a, rows_a = expected_events(RANGES_A, EPOCH, (0, 10_000_000_000), ORIGIN)
names_f, rows_f = expected_events(RANGES_F, EPOCH + 250_000_000,
                                  (0, 10_000_000_000), ORIGIN)
prof, _ = query(R1, "profiles")
items = prof["items"] if prof else []
t.eq([(p["id"], p["file"], p["worker"], p["rank"], p["host"], p["host_source"],
       p["event_count"], p["truncated"]) for p in items],
     [(0, os.path.basename(A), "decode-0", 0, "nodeA", "filename",
       len(rows_a), False),
      (1, os.path.basename(F), "frontend", None, "nodeF", "filename",
       len(rows_f), False)],
     "profiles: ids in byte order of relative paths, identity from file names")
if len(items) == 2:
    t.eq(items[0]["threads"],
         [{"global_tid": str(G1), "pid": 101, "tid": 111,
           "name": "executor-thread"},
          {"global_tid": "None", "pid": None, "tid": None, "name": None},
          {"global_tid": str(G2), "pid": 101, "tid": 112, "name": None}],
         "threads in first-appearance order with pid/tid and names")
    t.eq(items[0]["capture"], [0.0, 10.0], "capture bounds use systemClockNs")
    t.eq(items[1]["capture"], [0.25, 10.25], "capture without systemClockNs")
    t.eq(items[0]["invalid_or_boundary_ranges"], 3, "invalid_or_boundary_ranges")
    t.eq((items[0]["cuda"], items[1]["cuda"]), (True, False),
         "cuda from CUPTI_ACTIVITY_KIND_KERNEL")
    t.eq(items[1]["cpu_samples"], 3, "sample count")

srcs, _ = query(R1, "sources")
sitems = srcs["items"] if srcs else []
t.eq([(s["id"], s["path"], s["kind"], s["bytes"], s["modified_ns"], s["sha256"])
      for s in sitems],
     [(i, os.path.realpath(p), "nsight_sqlite", before[p][0], str(before[p][1]),
       before[p][2]) for i, p in enumerate((A, F))],
     "source inventory: absolute path, size, mtime, SHA-256")


def nsys_items(report, *args):
    res, r = query(report, "nsys", "--limit", "1000", *args)
    if res is None:
        t.ok(False, "nsys query answers", r.stderr)
        return None, []
    return res, [(i["profile"], i["start"], i["end"], i["name"], i["global_tid"],
                  i["pid"], i["tid"], i["rowid"]) for i in res["items"]]


def pidtid(g):
    if g == "None":
        return None, None
    g = int(g)
    return (g >> 24) & 0xFFFFFF, g & 0xFFFFFF


def expect_window(profiles, lo, hi):
    out = []
    for pid_, rows in profiles:
        for s, e, name, g, rowid in rows:
            if s <= hi and e >= lo:
                out.append((pid_, s, e, name, g) + pidtid(g) + (rowid,))
    out.sort(key=lambda x: (x[1], x[0], x[7]))
    return out


for lo, hi in ((0.0, 10.25), (1.0, 1.000000001), (6.5, 7.25), (9.9, 10.25)):
    res, got = nsys_items(R1, "--from", repr(lo), "--to", repr(hi))
    want = expect_window([(0, rows_a), (1, rows_f)], lo, hi)
    t.eq(got, want, "nsys window [%r, %r] matches the independent computation"
         % (lo, hi))
    t.eq(res and res["total"], len(want), "nsys total [%r, %r]" % (lo, hi))
    t.eq(res and res.get("partial"), False, "nsys not partial")
res, got = nsys_items(R1, "--name", "ünicode")
t.eq([g[3] for g in got], ["Ünicode root"], "nsys --name on imported names")

cpu, r = query(R1, "cpu")
sym = {i: s for i, s in STRINGS}
want = {}
for cid, start, g in SAMPLES:
    stack = set()
    for fid, symbol, unres, depth in FRAMES:
        if fid == cid:
            stack.add(("[unresolved] " if unres else "") + sym[symbol])
    for s in stack:
        want[s] = want.get(s, 0) + 1
want_items = sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))
t.eq([(i["symbol"], i["samples"]) for i in (cpu or {}).get("items", [])],
     want_items, "cpu hotspots (unresolved prefix, inclusive counts)")
t.eq((cpu or {}).get("total_samples"), 3, "cpu total_samples")
cpu2, r = query(R1, "cpu", "--from", "0.2505", "--to", "0.2525")
t.eq([(i["symbol"], i["samples"]) for i in (cpu2 or {}).get("items", [])],
     sorted([("main", 2), ("poll", 1), ("[unresolved] 0x7f00", 1)],
            key=lambda kv: (-kv[1], kv[0])),
     "cpu window selects samples by converted time")

# Stack frame order in the stored catalog (the order follows stackDepth).
db = sqlite3.connect("file:%s?mode=ro" % os.path.join(R1, "trace-data.sqlite"),
                     uri=True)
cat = json.loads(db.execute("SELECT json FROM catalog").fetchone()[0])
samples = db.execute("SELECT payload FROM samples WHERE profile = 1 "
                     "ORDER BY ordinal").fetchall()
db.close()
c = cat["profiles"][1]["cpu"]
stacks = [[c["names"][k] for k in st] for st in c["stacks"]]
t.eq([stacks[json.loads(p)[2]] for (p,) in samples],
     [["main", "poll", "poll"], ["[unresolved] 0x7f00", "main"],
      ["main", "tokenize"]], "stacks ordered by stackDepth, samples by time")
t.eq([json.loads(p)[3] for (p,) in samples], [21, 22, 20],
     "sample source rows are composite ids")
t.eq(cat["profiles"][0]["names"], names_a, "first-seen name dictionary")

# ------------------------------------------------- the cap: N and N+1
N = len(rows_a)
R2 = os.path.join(t.tmp, "r2")
r = build(["--nsys-sqlite", A, "--max-profile-events", str(N)], R2)
p2, _ = query(R2, "profiles")
t.eq(p2 and (p2["items"][0]["event_count"], p2["items"][0]["truncated"]),
     (N, False), "exactly N ranges with a cap of N is not truncation")
s2, _ = query(R2, "summary")
t.eq(s2 and s2["meta"]["warnings"], [], "no warning at exactly N")
r = build(["--nsys-sqlite", A, "--max-profile-events", str(N - 1)], R2)
p2, _ = query(R2, "profiles")
t.eq(p2 and (p2["items"][0]["event_count"], p2["items"][0]["truncated"]),
     (N - 1, True), "N ranges with a cap of N-1 is truncated")
s2, _ = query(R2, "summary")
t.eq(s2 and s2["meta"]["warnings"],
     ["%s: NVTX event limit reached (%d); query coverage is partial."
      % (os.path.basename(A), N - 1)], "the truncation warning")
res, got = nsys_items(R2)
t.eq(res and res.get("partial"), True, "nsys reports partial after truncation")
t.eq(got, expect_window([(0, rows_a[:N - 1])], 0, 10), "capped rows are the first N-1")

# ------------------------------------------------- appending to a document
R3 = os.path.join(t.tmp, "r3")
fx = json.load(open(tap.FIXTURE))
r = build([tap.FIXTURE, "--nsys-sqlite", A, "--max-profile-events", "1"], R3)
t.eq(r.returncode, 0, "evidence + export build succeeds")
s3, _ = query(R3, "summary")
p3, _ = query(R3, "profiles")
n0 = len(fx["profiles"])
items3 = p3["items"] if p3 else []
t.eq([p["id"] for p in items3], list(range(n0 + 1)), "profile ids continue")
if len(items3) == n0 + 1:
    t.eq(items3[n0]["evidence_source"], len(fx["sources"]), "source ids continue")
    t.eq(items3[0]["event_count"], len(fx["profiles"][0]["events"]),
         "the cap never applies to the document's own profiles")
origin = int(fx["meta"]["origin_ns"])
t.eq(items3[n0]["capture"] if len(items3) > n0 else None,
     [(EPOCH - origin) / 1e9, (EPOCH + 10_000_000_000 - origin) / 1e9],
     "the document's origin is used (epoch-scale, exact)")
res, got = nsys_items(R3, "--profile", str(n0))
rows3 = expected_events(RANGES_A, EPOCH, (0, 10_000_000_000), origin)[1][:1]
t.eq(got, expect_window([(n0, rows3)], 0, fx["meta"]["duration"]),
     "appended rows use the document's origin")
w3, _ = query(R3, "workers", "--worker", "decode-0")
t.eq(w3 and w3["items"][0]["profiles"],
     [p["id"] for p in fx["profiles"] if p["worker"] == "decode-0"] + [n0],
     "the new profile joins its existing worker")
t.eq(s3 and s3["meta"]["warnings"], fx["meta"]["warnings"] +
     ["%s: NVTX event limit reached (1); query coverage is partial."
      % os.path.basename(A)], "warnings appended")
t.eq(s3 and s3["audit"]["nvtx_without_end"],
     fx["audit"].get("nvtx_without_end", 0) + 1, "audit counters added")

# ------------------------------------------------- errors and warnings
E = os.path.join(t.tmp, "errs")
os.makedirs(E)
bad = os.path.join(E, "bad.sqlite")
with open(bad, "w") as f:
    f.write("not a database, just text\n")
R4 = os.path.join(t.tmp, "r4")
r = build(["--nsys-sqlite", bad], R4)
t.ok(r.returncode == 1 and "bad.sqlite: not an SQLite database" in r.stderr,
     "a file that is not SQLite is an error naming it", r.stderr)
t.ok(not os.path.exists(R4), "no report after an error")
corrupt = os.path.join(E, "corrupt.sqlite")
shutil.copy(A, corrupt)
with open(corrupt, "r+b") as f:
    f.seek(100)
    f.write(b"\xa5" * 3000)
r = build(["--nsys-sqlite", corrupt], R4)
t.ok(r.returncode == 1 and "corrupt.sqlite" in r.stderr,
     "a corrupt export is an error naming it", r.stderr)
missing = os.path.join(E, "ok", "partial.sqlite")
make_export(missing, [], extra=["DROP TABLE ANALYSIS_DETAILS",
                                "DROP TABLE NVTX_EVENTS"])
good = os.path.join(E, "ok", "good.sqlite")
make_export(good, [(1, 1, 2, "x", None, 5)])
reps = os.path.join(E, "reps")
os.makedirs(reps)
open(os.path.join(reps, "run.nsys-rep"), "w").write("x")
r = build(["--nsys-sqlite", os.path.join(E, "ok"), "--nsys-sqlite", reps], R4)
t.eq(r.returncode, 0, "missing tables: the build goes on", )
t.ok("dsight build: warning: " in r.stderr and "partial.sqlite" in r.stderr
     and "missing required tables" in r.stderr,
     "the skip warning is shown on stderr", r.stderr)
s4, _ = query(R4, "summary")
warns = s4["meta"]["warnings"] if s4 else []
t.ok(any("partial.sqlite" in w and "NVTX_EVENTS" in w and "ANALYSIS_DETAILS" in w
         and "skipped" in w for w in warns),
     "warning names the export and its missing tables", warns)
t.ok(any("reps" in w and ".nsys-rep" in w for w in warns),
     "warning for a directory holding only .nsys-rep files", warns)
p4, _ = query(R4, "profiles")
t.eq([p["file"] for p in p4["items"]] if p4 else None, ["good.sqlite"],
     "only the complete export is imported")
r = build(["--nsys-sqlite", os.path.join(E, "nope.sqlite")], R4)
t.ok(r.returncode != 0 and "nope.sqlite" in r.stderr,
     "a missing export is an error naming it", r.stderr)

# ------------------------------------------------- a generated export
G = os.path.join(t.tmp, "gen", "gh_prefill_w2_e1_profile_rank4.sqlite")
os.makedirs(os.path.dirname(G))
r = tap.run([sys.executable, GEN, G, "--ranges", "3000", "--samples", "40",
             "--threads", "3", "--duration-s", "2"])
t.eq(r.returncode, 0, "gen-nsys-export writes an export")
db = sqlite3.connect("file:%s?mode=ro" % G, uri=True)
tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master "
                                   "WHERE type = 'table'")}
(sysclk,) = db.execute("SELECT systemClockNs FROM "
                       "TARGET_INFO_SESSION_START_TIME").fetchone()
(want_ranges,) = db.execute(
    "SELECT count(*) FROM NVTX_EVENTS, ANALYSIS_DETAILS WHERE end IS NOT NULL "
    "AND end >= start AND start >= startTime - ?1 AND end <= stopTime - ?1",
    (sysclk,)).fetchone()
(want_threads,) = db.execute("SELECT count(DISTINCT globalTid) FROM "
                             "NVTX_EVENTS").fetchone()
db.close()
t.ok({"NVTX_EVENTS", "StringIds", "ENUM_NSYS_EVENT_TYPE", "OSRT_API",
      "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
      "COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS", "ThreadNames",
      "TARGET_INFO_SYSTEM_ENV"} <= tables, "generated export has the real tables",
     sorted(tables))
R5 = os.path.join(t.tmp, "r5")
r = build(["--nsys-sqlite", G], R5)
p5, _ = query(R5, "profiles")
it5 = p5["items"][0] if p5 and p5["items"] else {}
t.eq((it5.get("event_count"), it5.get("cpu_samples"), it5.get("worker"),
      it5.get("rank"), it5.get("engine"), it5.get("host"),
      it5.get("host_source"), it5.get("cuda"), len(it5.get("threads", []))),
     (want_ranges, 40, "prefill-2", 4, 1, "synthhost", "Nsight environment",
      True, want_threads), "generated export imports completely")

# ------------------------------------------------- single-file parity
R6 = os.path.join(t.tmp, "r6")
r = build(["--nsys-sqlite", D, "--job", "nsjob", "--single-file"], R6)
t.eq(r.returncode, 0, "single-file build from exports")
for args in (["profiles"], ["nsys", "--limit", "1000"], ["cpu"],
             ["nsys", "--from", "6.5", "--to", "7.25"], ["workers"]):
    a = tap.run([DSIGHT, "query", R1] + args).stdout
    b = tap.run([DSIGHT, "query", R6] + args).stdout
    t.ok(a == b and a, "document and SQLite answers agree: %s" % " ".join(args),
         "sqlite:   %s\ndocument: %s" % (a[:300], b[:300]))

sys.exit(t.done())

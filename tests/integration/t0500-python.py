#!/usr/bin/env python3
# tests/run: slow (minutes in the full tier: a clean clone starts it first)
"""The Python interface: `pip install client/python` into a fresh venv with no
package index, then dsight.open (in process), dsight.connect (a warm
session) and `dsight query` answer identically on random parameters of
every kind, on the fixture and the small and medium presets; errors map to
QueryError / DataError / NoSession with the CLI's message; handles work from
several threads and as context managers; help(dsight) lists the table."""
import json
import os
import random
import subprocess
import sys
import threading
import venv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

ASAN = "asan" in os.path.basename(tap.BUILD)
if ASAN and os.environ.get("DSIGHT_T0500_ASAN") != "1":
    # The sanitizer build's libdsight.so needs the ASan runtime loaded first:
    # run this test again with it preloaded (Python's own allocations are
    # not leak-checked; the library's are by the unit and session tests).
    lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                         text=True).stdout.strip()
    env = dict(os.environ, DSIGHT_T0500_ASAN="1", LD_PRELOAD=lib,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
# Commands this test runs do not inherit the preload.
os.environ.pop("LD_PRELOAD", None)

t = tap.T()
DSIGHT = tap.binpath("dsight")
PKG = os.path.join(tap.TOP, "client", "python")

# 1. A fresh venv, pip install with no index (offline): the in-tree backend
# builds libdsight.so with the Makefile and packs it into the wheel.
env_dir = os.path.join(t.tmp, "venv")
venv.EnvBuilder(with_pip=True).create(env_dir)
py = os.path.join(env_dir, "bin", "python")
r = tap.run([py, "-m", "pip", "install", "--no-index", "-q", PKG],
            env=sl.env_with(PIP_DISABLE_PIP_VERSION_CHECK="1"), timeout=600)
t.ok(r.returncode == 0, "pip install --no-index client/python into a fresh venv",
     r.stdout + r.stderr)
r = tap.run([py, "-c", "import dsight, sys; sys.stdout.write(dsight.__file__)"],
            cwd=t.tmp)
t.ok(r.returncode == 0 and r.stdout.startswith(env_dir),
     "the installed package imports from the venv", r.stdout + r.stderr)

# The rest runs in this interpreter against the installed package's files
# (its modules and the libdsight.so it carries).  Under the sanitizer build
# the library comes from that build instead, preloaded with its runtime.
site = os.path.dirname(os.path.dirname(r.stdout.strip())) if r.returncode == 0 else PKG
sys.path.insert(0, site)
if ASAN:
    os.environ["DSIGHT_LIBRARY"] = os.path.join(tap.BUILD, "lib", "libdsight.so")
import dsight  # noqa: E402

t.ok(dsight.__file__.startswith(site), "tests use the installed package", dsight.__file__)
t.ok(set(dsight.KINDS) >= {"summary", "requests", "nsys", "cpu", "metrics"},
     "KINDS lists the engine's kinds", dsight.KINDS)
doc = dsight.__doc__
t.ok(all(k in doc for k in dsight.KINDS) and all(p in doc for p in dsight.PARAMETERS),
     "help(dsight) lists every kind and parameter of the table")


def cli(target, kind, params, remote=False):
    """(stdout parsed or None, exit status, error message) of dsight query."""
    args = [DSIGHT, "query"] + (["--remote", target] if remote else [target]) + [kind]
    for name, v in params.items():
        flag = dsight.PARAMETERS[name]["flag"]
        if dsight.PARAMETERS[name]["type"] == "boolean":
            if v:
                args.append(flag)
            continue
        for x in (v if isinstance(v, list) else [v]):
            args += [flag, x if isinstance(x, str) else json.dumps(x)]
    r = tap.run(args)
    if r.returncode == 0:
        return r.stdout.rstrip("\n"), 0, None
    try:
        msg = json.loads(r.stderr)["error"]
    except ValueError:
        msg = r.stderr
    # The one message that names the CLI flag where RPC names the parameter.
    if msg.startswith("--timeout must be"):
        msg = msg[2:]
    return None, r.returncode, msg


def py_answer(h, kind, params):
    """(text or parsed, exit status as the CLI would give, message)."""
    try:
        if isinstance(h, dsight.Dataset):
            return h.query_json(kind, **params), 0, None
        return h.query(kind, **params), 0, None
    except dsight.QueryError as e:
        return None, 2, str(e)
    except dsight.DataError as e:
        return None, 1, str(e)


def catalog_values(ds):
    """Names a random query can filter on, from the dataset itself."""
    s = ds.query("summary")
    dur = s["meta"].get("duration_s") or s["meta"].get("duration") or 10.0
    reqs = ds.query("requests", limit=1000)["items"]
    fams = ds.query("families", limit=1000)["items"]
    workers = [w.get("id") for w in ds.query("workers", limit=1000)["items"]]
    sessions = ds.query("sessions", limit=1000)["items"]
    return {
        "duration": float(dur),
        "requests": [q["id"] for q in reqs] or ["req-none"],
        "workers": [w for w in workers if isinstance(w, str)] or ["w"],
        "sessions": [x.get("id") for x in sessions if isinstance(x.get("id"), str)] or ["s"],
        "agents": sorted({q.get("agent") for q in reqs if isinstance(q.get("agent"), str)}) or ["a"],
        "names": [f["name"] for f in fams if isinstance(f.get("name"), str)] or ["n"],
    }


SORT_KEYS = ["start", "-start", "end", "duration", "-duration", "name", "ttft_ms", "-ttft_ms",
             "id", "worker", "requests", "count", "-clipped_total", "bogus"]
FIELDS = ["id", "start", "end", "name", "ttft_ms", "profile", "key", "count", "samples", "nope"]


def random_params(rng, kind, cv):
    """A random parameter set for kind, drawn from the table of parameters
    (the kind's own ones, sometimes invalid values, sometimes a foreign
    parameter the kind ignores)."""
    used = [n for n, p in dsight.PARAMETERS.items() if kind in p.get("kinds", [])]
    others = [n for n in dsight.PARAMETERS if n not in used]
    names = rng.sample(used, min(len(used), rng.randint(0, 3)))
    if others and rng.random() < 0.2:
        names.append(rng.choice(others))
    d = cv["duration"]
    out = {}
    for n in names:
        typ = dsight.PARAMETERS[n]["type"]
        if n == "start":
            out[n] = rng.choice([0, round(rng.uniform(0, d * 0.9), 3), -1])
        elif n == "end":
            out[n] = rng.choice([round(rng.uniform(d * 0.1, d), 3), d, d + 1])
        elif n == "request_id":
            out[n] = rng.choice(cv["requests"] + ["no-such-request"])
        elif n in ("worker", "session", "agent"):
            pool = {"worker": cv["workers"], "session": cv["sessions"], "agent": cv["agents"]}[n]
            v = [rng.choice(pool) for _ in range(rng.randint(1, 2))]
            if rng.random() < 0.15:
                v[0] = "no-such-" + n
            out[n] = v if len(v) > 1 else v[0]
        elif n == "name":
            nm = rng.choice(cv["names"])
            out[n] = rng.choice([nm, nm[: max(1, len(nm) // 2)], "FORWARD", "zz-none"])
        elif n == "search":
            out[n] = rng.choice(["req", "CHAT", "sess", "ünicode", "x"])
        elif n in ("rank", "profile"):
            out[n] = rng.choice([0, 1, 2, 7])
        elif n == "min_ttft_ms":
            out[n] = rng.choice([0, 5, 10.5, 100])
        elif n == "offset":
            out[n] = rng.choice([0, 1, 3, -1])
        elif n == "limit":
            out[n] = rng.choice([0, 1, 5, 100, 1001])
        elif n == "sort":
            out[n] = ",".join(rng.sample(SORT_KEYS, rng.randint(1, 2)))
        elif n == "group_by":
            out[n] = rng.choice(["name", "worker", "profile", "tid", "session", "status", "bogus"])
        elif n == "fields":
            out[n] = ",".join(rng.sample(FIELDS, rng.randint(1, 3)))
        elif n == "bucket":
            out[n] = rng.choice([d / 7, 1, d / 3, 0])
        elif n == "of":
            out[n] = rng.choice(["requests", "nsys", "cpu", "metrics", "bogus"])
        elif n == "phase":
            out[n] = rng.choice(["prefill", "decode", "whole", "bogus"])
        elif n == "sql":
            out[n] = rng.choice(["select count(*) from nvtx", "select 1", "delete from events"])
        elif n == "timeout":
            out[n] = rng.choice([1, 5, 31])
        elif typ == "boolean":
            out[n] = rng.random() < 0.5
        elif typ == "integer":
            out[n] = rng.randint(0, 3)
        elif typ == "number":
            out[n] = round(rng.uniform(0, d), 2)
        else:
            out[n] = "x"
    return out


def prepare(label, doc):
    rep = os.path.join(t.tmp, label + "-report")
    r = tap.run([DSIGHT, "build", doc, "-o", rep], timeout=600)
    t.ok(r.returncode == 0, "%s: dsight build" % label, r.stderr)
    return rep


datasets = [("fixture", tap.FIXTURE)]
gen = tap.binpath("gen-capture")
# the medium capture only in the full tier (DSIGHT_TEST_LONG=1)
for preset in (["small"] if ASAN or not tap.LONG else ["small", "medium"]):
    doc = os.path.join(t.tmp, preset + ".json")
    r = tap.run([gen, "--preset", preset, "-o", doc], timeout=600)
    t.ok(r.returncode == 0, "gen-capture %s" % preset, r.stderr)
    datasets.append((preset, doc))

rng = random.Random(20261201)
for label, doc in datasets:
    rep = prepare(label, doc)
    sock = os.path.join(t.tmp, label + ".sock")
    srv = sl.Server(rep, "--path", sock, "--idle-timeout", "off")
    t.ok(srv.path == sock, "%s: warm session started" % label, srv.line)
    with dsight.open(rep) as ds, dsight.connect(sock) as ss, dsight.open(doc) as mem:
        cv = catalog_values(ds)
        n = 40 if label == "fixture" else 25
        if ASAN:
            n = 12
        n = tap.loops(n, max(5, n // 4))
        diffs = []
        count = 0
        for kind in dsight.KINDS:
            for _ in range(n // 5 if kind == "sql" else n):
                params = random_params(rng, kind, cv)
                want = cli(rep, kind, params)
                got_open = py_answer(ds, kind, params)
                got_conn = py_answer(ss, kind, params)
                count += 1
                if got_open != want:
                    diffs.append(("open", kind, params, got_open[1:], want[1:]))
                parsed_want = (json.loads(want[0]) if want[0] else None, want[1], want[2])
                if got_conn != parsed_want:
                    diffs.append(("connect", kind, params, got_conn[1:], want[1:]))
                if kind != "sql" and rng.random() < 0.3:
                    wdoc = cli(doc, kind, params)
                    got_mem = py_answer(mem, kind, params)
                    if got_mem != wdoc:
                        diffs.append(("open document", kind, params, got_mem[1:], wdoc[1:]))
        t.ok(not diffs, "%s: open, connect and dsight query agree on %d random queries"
             " of every kind" % (label, count), "\n".join(repr(x)[:400] for x in diffs[:10]))

        # Threads: one handle shared by several threads.
        if label == "small":
            want = ds.query_json("nsys", limit=50)
            outs, errs = [], []

            def work(h=ds, s=ss):
                try:
                    for _ in range(20):
                        outs.append(h.query_json("nsys", limit=50) == want)
                        outs.append(s.query("nsys", limit=50) == json.loads(want))
                except Exception as exc:  # noqa: BLE001 - reported below
                    errs.append(repr(exc))
            th = [threading.Thread(target=work) for _ in range(4)]
            for x in th:
                x.start()
            for x in th:
                x.join()
            t.ok(not errs and len(outs) == 160 and all(outs),
                 "a dataset and a session shared by 4 threads answer identically", errs[:3])
    srv.check(t)

# Errors and their classes.
with dsight.open(tap.FIXTURE) as ds:
    try:
        ds.query("requests", limit=5000)
        t.ok(False, "limit 5000 raises QueryError")
    except dsight.QueryError as e:
        t.eq(str(e), "Require integer offset >= 0 and 0 <= limit <= 1000", "QueryError carries the engine's message")
    try:
        ds.query("requests", limt=5)
        t.ok(False, "a misspelt parameter raises QueryError")
    except dsight.QueryError as e:
        t.ok(str(e).startswith("Unknown query parameter 'limt'; choose from "),
             "a misspelt parameter raises QueryError naming it", str(e))
    big = ds.query("metrics", points=True, limit=1000)
    vals = [p[1] for s in big["items"] for p in s.get("points", []) if isinstance(p[1], int)]
    t.ok(any(v > 2 ** 64 for v in vals) or any(v < -(2 ** 64) for v in vals),
         "integers beyond 64 bits stay exact Python ints")
# In process, sql statements reuse their connection: each still has its own
# refusal and rows, and a rebuilt report is read anew.
jrep = os.path.join(t.tmp, "jobrep")
sl.build_report(tap.FIXTURE, jrep)
JOB = "SELECT json_extract(json, '$.meta.job') AS job FROM catalog"
with dsight.open(jrep) as ds:
    said = []
    for sql in ("SELECT load_extension('x')", "SELECT * FROM no_such_view"):
        try:
            ds.query("sql", sql=sql)
        except dsight.QueryError as e:
            said.append(str(e))
    before = [ds.query("sql", sql=JOB)["rows"] for _ in range(3)]
    d2 = json.load(open(tap.FIXTURE))
    d2["meta"]["job"] = "rebuilt-job"
    ev2 = os.path.join(t.tmp, "job2.json")
    json.dump(d2, open(ev2, "w"))
    sl.build_report(ev2, jrep)
    after = ds.query("sql", sql=JOB)["rows"]
t.ok(said == ["sql does not allow the function load_extension()",
              "no such table: no_such_view"],
     "in process: a refusal, then a missing table, each with its own message", said)
t.ok(before == [[["example-run"]]] * 3 and after == [["rebuilt-job"]],
     "in process: sql reads the rebuilt report, not a connection kept from before",
     (before, after))
try:
    dsight.open(os.path.join(t.tmp, "missing-report"))
    t.ok(False, "a missing dataset raises DataError")
except dsight.DataError as e:
    want = cli(os.path.join(t.tmp, "missing-report"), "summary", {})
    t.eq((1, str(e)), (want[1], want[2]), "a missing dataset raises DataError with the CLI's message")
ghost = os.path.join(t.tmp, "ghost.sock")
try:
    dsight.connect(ghost)
    t.ok(False, "no session raises NoSession")
except dsight.NoSession as e:
    want = cli(ghost, "summary", {}, remote=True)
    t.eq((3, str(e)), (want[1], want[2]), "NoSession carries the CLI's message (exit 3 there)")
try:
    dsight.connect("not a/valid name")
    t.ok(False, "an invalid address raises QueryError")
except dsight.QueryError:
    t.ok(True, "an invalid address raises QueryError")
ds = dsight.TraceDataset.from_path(tap.FIXTURE)
t.eq(ds.query("summary"), json.loads(cli(tap.FIXTURE, "summary", {})[0]),
     "TraceDataset.from_path(...).query is the same engine")
ds.close()
try:
    ds.query("summary")
    t.ok(False, "a closed dataset raises DataError")
except dsight.DataError:
    t.ok(True, "a closed dataset raises DataError")

sl.cleanup(t)
sys.exit(t.done())

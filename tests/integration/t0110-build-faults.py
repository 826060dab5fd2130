#!/usr/bin/env python3
"""t0110-build-faults: every failing build gives one clear error line, a
non-zero exit, leaves the previous report byte-identical and no staging
directory; refused outputs are not touched.

Covers bad evidence (schema, duration, duplicate ids, truncated gzip,
invalid UTF-8, NaN), each output refusal, an unwritable output directory,
a write failure in the middle of a build (file-size limit), the build
lock, stale staging removal, the two-rename publish fallback and builds
stopped by SIGINT, SIGTERM and SIGHUP (the input is a FIFO the test holds
open, so the signal always lands mid-build).
"""
import copy
import fcntl
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")

with open(tap.FIXTURE, encoding="utf-8") as f:
    FIXTURE_TEXT = f.read()
DOC = json.loads(FIXTURE_TEXT)




def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    return path


def build(args, out, **kw):
    return tap.run([DSIGHT, "build"] + args + ["-o", out], **kw)


def expect_failure(label, args, out, root=None, must_contain=None, **kw):
    """Runs a build that must fail and leave root (default: out's parent)
    exactly as it was."""
    root = root or os.path.dirname(out)
    before = tap.tree_state(root, detail=True)
    r = build(args, out, **kw)
    lines = r.stderr.splitlines()
    t.ok(r.returncode != 0, "%s: non-zero exit" % label, r.stderr)
    t.ok(len(lines) == 1 and lines[0].startswith("dsight build: "),
         "%s: one error line" % label, r.stderr)
    if must_contain:
        t.ok(must_contain in r.stderr, "%s: message names the problem" % label,
             "want %r in %r" % (must_contain, r.stderr))
    t.eq(r.stdout, "", "%s: nothing on stdout" % label)
    after = tap.tree_state(root, detail=True)
    t.ok(after == before, "%s: previous state byte-identical, no staging left" % label,
         {k: (before.get(k), after.get(k)) for k in set(before) | set(after)
          if before.get(k) != after.get(k)})
    return r


# A published report to protect.
base = os.path.join(t.tmp, "w")
os.mkdir(base)
rep = os.path.join(base, "rep")
r = build([tap.FIXTURE], rep)
t.ok(r.returncode == 0, "baseline report builds", r.stderr)

# ---- bad evidence ----
def doc_with(fn):
    d = copy.deepcopy(DOC)
    fn(d)
    return json.dumps(d, ensure_ascii=False)


bad = {
    "wrong schema": (doc_with(lambda d: d.__setitem__("schema", "srtctl-trace/2")), "schema"),
    "missing duration": (doc_with(lambda d: d["meta"].pop("duration")), "duration"),
    "zero duration": (doc_with(lambda d: d["meta"].__setitem__("duration", 0)), "duration"),
    "negative duration": (doc_with(lambda d: d["meta"].__setitem__("duration", -1.5)), "duration"),
    "NaN duration": (doc_with(lambda d: d["meta"].__setitem__("duration", 1.0)).replace(
        '"duration":1.0', '"duration":NaN').replace('"duration": 1.0', '"duration": NaN'), None),
    "infinite duration": (doc_with(lambda d: d["meta"].__setitem__("duration", 1.0)).replace(
        '"duration": 1.0', '"duration": 1e999'), None),
    "duplicate request ids": (doc_with(lambda d: d["requests"][1].__setitem__(
        "id", d["requests"][0]["id"])), None),
    "NaN token in a point": (doc_with(lambda d: d["metrics"][0]["points"][0].__setitem__(
        1, 987654321987)).replace("987654321987", "NaN"), None),
    "malformed event row": (doc_with(lambda d: d["profiles"][0]["events"][1].pop()), "profiles[0].events[1]"),
    "not JSON": ("{\"schema\": ", None),
}
for label, (text, needle) in bad.items():
    p = write(os.path.join(t.tmp, label.replace(" ", "_") + ".json"), text)
    expect_failure(label, [p], rep, must_contain=needle)

gz = gzip.compress(FIXTURE_TEXT.encode("utf-8"))
p = write(os.path.join(t.tmp, "trunc.json.gz"), gz[: len(gz) // 2])
expect_failure("truncated gzip", [p], rep)
p = write(os.path.join(t.tmp, "badutf8.json"),
          FIXTURE_TEXT.encode("utf-8").replace(b"example-run", b"exa\xff\xfeple", 1))
expect_failure("invalid UTF-8", [p], rep)
expect_failure("missing input", [os.path.join(t.tmp, "nope.json")], rep)

# ---- output refusals ----
ev_dir = os.path.join(t.tmp, "evdir")
os.mkdir(ev_dir)
ev = write(os.path.join(ev_dir, "ev.json"), FIXTURE_TEXT)
expect_failure("output is the input's directory", [ev], ev_dir, root=t.tmp,
               must_contain="input")
expect_failure("output is an ancestor of the input", [ev], t.tmp, root=t.tmp,
               must_contain="input")

link = os.path.join(base, "link")
os.symlink(rep, link)
expect_failure("output is a symlink", [tap.FIXTURE], link, must_contain="symbolic link")
os.unlink(link)

plain = write(os.path.join(base, "plainfile"), "x")
expect_failure("output is a regular file", [tap.FIXTURE], plain, must_contain="not a directory")
os.unlink(plain)

foreign = os.path.join(base, "foreign")
os.mkdir(foreign)
write(os.path.join(foreign, "notes.txt"), "mine")
expect_failure("non-empty foreign directory", [tap.FIXTURE], foreign, must_contain="not a dsight report")
shutil.rmtree(foreign)

fake = os.path.join(base, "fake")
os.mkdir(fake)
write(os.path.join(fake, "manifest.json"), json.dumps({"generator": "other", "files": ["manifest.json"]}))
expect_failure("manifest from another generator", [tap.FIXTURE], fake, must_contain="manifest.json")
shutil.rmtree(fake)


def copy_report(name):
    dst = os.path.join(base, name)
    shutil.copytree(rep, dst, symlinks=True)
    return dst


extra = copy_report("extra")
write(os.path.join(extra, "stray.txt"), "x")
expect_failure("report with an unlisted file", [tap.FIXTURE], extra, must_contain="stray.txt")
shutil.rmtree(extra)

extra = copy_report("extra-detail")
os.makedirs(os.path.join(extra, "detail"), exist_ok=True)  # exists once shards land
write(os.path.join(extra, "detail", "0000.json.gz"), "x")
expect_failure("report with an unlisted file in detail/", [tap.FIXTURE], extra,
               must_contain="detail/0000.json.gz")
shutil.rmtree(extra)

extra = copy_report("extra-link")
os.symlink("/etc/passwd", os.path.join(extra, "trace-data.json.gz"))
expect_failure("report containing a symlink", [tap.FIXTURE], extra, must_contain="symbolic link")
shutil.rmtree(extra)

empty = os.path.join(base, "empty")
os.mkdir(empty)
r = build([tap.FIXTURE], empty)
t.ok(r.returncode == 0 and os.path.exists(os.path.join(empty, "manifest.json")),
     "an empty output directory is accepted", r.stderr)
shutil.rmtree(empty)

# ---- unwritable output directory ----
ro = os.path.join(t.tmp, "ro")
os.mkdir(ro)
locked_by = None
if os.geteuid() != 0:
    os.chmod(ro, 0o555)
    locked_by = "chmod"
elif shutil.which("chattr") and subprocess.run(["chattr", "+i", ro],
                                               capture_output=True).returncode == 0:
    locked_by = "chattr"
try:
    if locked_by:
        expect_failure("unwritable output directory", [tap.FIXTURE],
                       os.path.join(ro, "rep"), root=ro)
    else:
        t.skip("unwritable output directory", "as root, chattr +i is needed (e2fsprogs) and failed here")
finally:
    if locked_by == "chattr":
        subprocess.run(["chattr", "-i", ro])
    os.chmod(ro, 0o755)

# An existing report that cannot be replaced: the exchange fails, the
# staging directory is removed, the report is untouched.
locked = None
if locked_by == "chattr":
    ch = subprocess.run(["chattr", "+i", rep], capture_output=True, text=True)
    locked = "chattr" if ch.returncode == 0 else None
if locked != "chattr":
    t.skip("report that cannot be replaced",
           "needs root and a working chattr +i (e2fsprogs) on the test directory's filesystem")
else:
    try:
        expect_failure("report that cannot be replaced", [tap.FIXTURE], rep,
                       must_contain="cannot publish")
        expect_failure("report that cannot be replaced (two renames)", [tap.FIXTURE], rep,
                       env=dict(os.environ, DSIGHT_TEST_NO_RENAME_EXCHANGE="1"))
    finally:
        subprocess.run(["chattr", "-i", rep])

# ---- a write failure in the middle of the build (file-size limit) ----
def small_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (32 * 1024, 32 * 1024))


r = expect_failure("file-size limit mid-build", [tap.FIXTURE], rep, preexec_fn=small_fsize)
t.ok(r.returncode > 0, "file-size limit: a clean exit, not a signal", r.returncode)
r = expect_failure("file-size limit mid-build (single-file)", [tap.FIXTURE, "--single-file"],
                   rep, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)))

# ---- the build lock ----
lockp = os.path.join(base, ".rep.lock")
fd = os.open(lockp, os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
stale = os.path.join(base, ".rep.build-abc123")
os.mkdir(stale)
write(os.path.join(stale, "junk"), "x")
t0 = time.monotonic()
expect_failure("a concurrent build of the same output", [tap.FIXTURE], rep,
               must_contain="another build")
# the behaviour: it fails at once instead of waiting for the lock (which is
# held until the end of this test); a generous bound for a loaded machine
t.ok(time.monotonic() - t0 < 30, "the concurrent build fails at once instead of waiting")
t.ok(os.path.exists(stale), "stale staging is not removed without the lock")
os.close(fd)

r = build([tap.FIXTURE], rep)
t.ok(r.returncode == 0, "build after the lock is released", r.stderr)
t.ok(not os.path.exists(stale), "stale staging removed while holding the lock")

# Two real builds at once: each either succeeds or reports the lock.
procs = [subprocess.Popen([DSIGHT, "build", tap.FIXTURE, "-o", rep],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
         for _ in range(4)]
res = [(p.wait(), p.stdout.read(), p.stderr.read()) for p in procs]
for p in procs:
    p.stdout.close()
    p.stderr.close()
okay = all((rc == 0 and err == "") or (rc != 0 and "another build" in err and
                                       len(err.splitlines()) == 1)
           for rc, out, err in res)
t.ok(okay and any(rc == 0 for rc, _, _ in res), "concurrent builds never interleave", res)
m = json.load(open(os.path.join(rep, "manifest.json")))
on_disk = sorted(os.path.relpath(os.path.join(d, f), rep)
                 for d, _, fs in os.walk(rep) for f in fs)
t.eq(sorted(m["files"]), on_disk, "report intact after concurrent builds")
t.eq([n for n in os.listdir(base) if ".build-" in n], [], "no staging left after concurrent builds")

# ---- the two-rename publish fallback ----
old_gen = json.load(open(os.path.join(rep, "manifest.json")))["generation"]
r = build([tap.FIXTURE], rep, env=dict(os.environ, DSIGHT_TEST_NO_RENAME_EXCHANGE="1"))
t.ok(r.returncode == 0, "publish by two renames", r.stderr)
new_gen = json.load(open(os.path.join(rep, "manifest.json")))["generation"]
t.ok(new_gen != old_gen and json.loads(r.stdout)["generation"] == new_gen,
     "two-rename publish replaced the report")
t.eq([n for n in os.listdir(base) if ".build-" in n], [], "no old report left by the fallback")

# ---- interrupted builds (SIGINT, SIGTERM, SIGHUP) clean up after themselves ----
# The evidence comes through a FIFO this test holds open: once the build has
# its staging directory it is stuck reading, so the signal always lands in
# the middle of the build (no race with a fast build); then the rest of the
# document arrives and the build must stop instead of publishing.
import signal  # noqa: E402
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    name = signal.Signals(sig).name
    before = tap.tree_state(base, detail=True)
    fifo = os.path.join(t.tmp, "ev-%s.json" % name)
    os.mkfifo(fifo)
    p = subprocess.Popen([DSIGHT, "build", fifo, "-o", rep],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = open(fifo, "wb")  # blocks until the build opens it
    half = FIXTURE_TEXT.encode()[:len(FIXTURE_TEXT) // 2]
    w.write(half)
    w.flush()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None and \
            not [n for n in os.listdir(base) if n.startswith(".rep.build-")]:
        time.sleep(0.005)
    staged = p.poll() is None and bool([n for n in os.listdir(base) if n.startswith(".rep.build-")])
    t.ok(staged, "%s: the build is staging, waiting for the rest of its input" % name)
    p.send_signal(sig)
    try:
        w.write(FIXTURE_TEXT.encode()[len(half):])
        w.close()
    except BrokenPipeError:
        pass
    out, err = p.communicate(timeout=120)
    t.ok(p.returncode == 1 and err == "dsight build: interrupted; the previous report is unchanged\n"
         and out == "", "%s: one line, exit 1" % name, (p.returncode, out, err))
    after = tap.tree_state(base, detail=True)
    t.ok(after == before, "%s: previous report untouched, staging removed" % name,
         sorted(set(before) ^ set(after))[:10])
    os.unlink(fifo)

# ---- usage errors ----
r = tap.run([DSIGHT, "build", tap.FIXTURE])
t.ok(r.returncode == 2 and r.stderr.startswith("dsight build: ") and "-o" in r.stderr,
     "missing -o is a usage error", r.stderr)
r = tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep, "--bogus"])
t.ok(r.returncode == 2 and "--bogus" in r.stderr, "unknown option is a usage error", r.stderr)

sys.exit(t.done())

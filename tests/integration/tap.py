"""tap: tiny TAP helpers for the Python integration tests (stdlib only).

    import tap
    t = tap.T()
    t.ok(cond, "name", detail)
    t.eq(got, want, "name")
    t.skip("name", "why this machine cannot run it")
    sys.exit(t.done())
"""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DSIGHT_BUILD", os.path.join(TOP, "build"))
BIN = os.path.join(BUILD, "bin")
FIXTURE = os.path.join(TOP, "tests", "fixtures", "example.trace.json")
# DSIGHT_TEST_LONG=1 (the full tier: make check, CI): the long random loops
# at full length; otherwise (make test) each runs a short sample of them.
LONG = os.environ.get("DSIGHT_TEST_LONG") == "1"
# The sanitizer build (build-asan): every process it starts costs about
# 0.1 s of CPU before doing anything (ASan's start and LeakSanitizer's
# check at exit), and its code runs several times slower.
ASAN = "asan" in os.path.basename(BUILD)
# The ThreadSanitizer build (build-tsan): only the scripts that say
# "# tests/run: tsan" run on it; its code runs 5-15x slower.
TSAN = "tsan" in os.path.basename(BUILD)


def loops(full, short):
    """full under DSIGHT_TEST_LONG=1, else short: the length of a random
    loop (parity samples, random queries)."""
    return full if LONG else short


def matrix(full, short):
    """full under DSIGHT_TEST_LONG=1 on the plain build, else short: the
    size of a large matrix of answers compared with a reference (parity,
    mutations).  The plain build checks every answer; the sanitizer build
    looks for memory errors, which a fixed sample covering each path
    shows as well (tests/README.md "Keeping tests fast")."""
    return full if LONG and not (ASAN or TSAN) else short


def sanitizer_preload(env):
    """Adds to env (a dict, returned) what a Python interpreter needs to
    load the sanitizer build's libdsight.so: its runtime preloaded (ASan's
    with leak checks off: Python's own allocations are not ours)."""
    lib = "libasan.so" if ASAN else "libtsan.so" if TSAN else None
    if lib:
        path = subprocess.run(["gcc", "-print-file-name=" + lib], capture_output=True,
                              text=True).stdout.strip()
        env["LD_PRELOAD"] = path
        if ASAN:
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


def binpath(name):
    return os.path.join(BIN, name)


# What a sanitizer prints when it finds something (ASan, LSan, UBSan, TSan).
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "LeakSanitizer:",
                   "runtime error:", "ERROR: UndefinedBehaviorSanitizer",
                   "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")
# Sanitizer reports seen on the stderr of commands run through run():
# T.done() fails the test file when there is one.
sanitizer_reports = []


def sanitizer_report(text):
    """The sanitizer report in text (from its first mark on), or None."""
    if not text:
        return None
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    at = [text.find(m) for m in SANITIZER_MARKS if m in text]
    if not at:
        return None
    start = text.rfind("\n", 0, min(at)) + 1
    return text[start:start + 3000]


def run(args, **kw):
    """Runs a command; returns CompletedProcess with text stdout/stderr.
    A sanitizer report on its stderr is recorded (see T.done)."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    r = subprocess.run(args, **kw)
    rep = sanitizer_report(r.stderr) if kw.get("capture_output") else None
    if rep:
        sanitizer_reports.append((" ".join(str(a) for a in args)[:200], rep))
    return r


def query(*args, env=None):
    """dsight query ARGS (the build under test)."""
    return run([binpath("dsight"), "query", *args], env=env)


def err_of(r):
    """The JSON error object a failed query printed on stderr, or {"raw": text}."""
    try:
        return json.loads(r.stderr)
    except ValueError:
        return {"raw": r.stderr}


def tree_state(root, detail=False):
    """Every path under root with its content hash ("dir" for a directory);
    lock files beside the output are left out (they are expected there).
    detail=True also records modes, mtimes and symbolic links."""
    out = {}
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            p = os.path.join(dp, n)
            if n.endswith(".lock") and dp == root:
                continue
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", st.st_mode) if detail else "dir"
            else:
                with open(p, "rb") as f:
                    h = hashlib.sha256(f.read()).hexdigest()
                out[rel] = ("file", st.st_mode, st.st_mtime_ns, h) if detail else h
    return out


class T:
    current = None  # the latest T: sessionlib reports its checks there
    finishers = []  # called with the T by done() (sessionlib: check servers)

    def __init__(self):
        T.current = self
        self.passed = 0
        self.failed = 0
        self.tmp = tempfile.mkdtemp(prefix="dsight-test-")

    def ok(self, cond, name, detail=None):
        if cond:
            self.passed += 1
            print("ok - %s" % name, flush=True)
        else:
            self.failed += 1
            print("not ok - %s" % name, flush=True)
            if detail is not None:
                for line in str(detail).splitlines()[:40]:
                    print("#   %s" % line, flush=True)
        return bool(cond)

    def skip(self, name, why):
        """A test that cannot run here: "ok - NAME # SKIP WHY".  tests/run
        counts it as skipped (a failure under DSIGHT_NO_SKIP=1, and a skip
        without a reason is a failure)."""
        if not why or not str(why).strip():
            raise ValueError("a skip must say why")
        print("ok - %s # SKIP %s" % (name, why), flush=True)

    def eq(self, got, want, name):
        return self.ok(got == want, name, "got:  %r\nwant: %r" % (got, want))

    def done(self):
        for fn in T.finishers:
            fn(self)
        for cmd, rep in sanitizer_reports:
            self.ok(False, "no sanitizer report from: %s" % cmd, rep)
        del sanitizer_reports[:]
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 1 if self.failed else 0

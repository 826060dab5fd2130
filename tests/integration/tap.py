"""tap: tiny TAP helpers for the Python integration tests (stdlib only).

    import tap
    t = tap.T()
    t.ok(cond, "name", detail)
    t.eq(got, want, "name")
    t.skip("name", "why this machine cannot run it")
    sys.exit(t.done())
"""
import os
import shutil
import subprocess
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DSIGHT_BUILD", os.path.join(TOP, "build"))
BIN = os.path.join(BUILD, "bin")
FIXTURE = os.path.join(TOP, "tests", "fixtures", "example.trace.json")


def binpath(name):
    return os.path.join(BIN, name)


def run(args, **kw):
    """Runs a command; returns CompletedProcess with text stdout/stderr."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(args, **kw)


class T:
    def __init__(self):
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
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 1 if self.failed else 0

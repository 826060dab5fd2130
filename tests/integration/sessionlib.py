"""sessionlib: helpers for the warm-session integration tests (stdlib only).

Starts dsightd servers (each on its own --path in a temp dir, or names with
XDG_RUNTIME_DIR pointed at a private temp dir), speaks the framed JSON-RPC
protocol directly, and always cleans up the processes it started.

Every server started here is checked once it is over: its exit status (0,
or the expect_rc the test set) and its stderr and log (no sanitizer report).
A test calls server.check() where the server should be done, or leaves it to
cleanup(), which stops what still runs (SIGTERM: a clean stop exits 0) and
checks the rest, reporting on tap.T.current; tap.T.done() runs cleanup()
too, for a test that does not.  Servers that leave the test's
process tree (--daemonize, an orphaned server) are followed through a child
subreaper (become_subreaper(); Daemon / daemonize()), so their exit status
is known too.
"""
import json
import os
import select
import shlex
import signal
import sys
import socket
import struct
import subprocess
import time

import tap
from tap import sanitizer_report  # noqa: F401  (part of this module's API)

DSIGHT = tap.binpath("dsight")
DSIGHTD = tap.binpath("dsightd")

_procs = []
_servers = []  # Server and Daemon objects not checked yet


def env_with(**kw):
    env = dict(os.environ)
    for k, v in kw.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def parse_record(line):
    rec = {}
    for tok in shlex.split(line):
        k, _, v = tok.partition("=")
        rec[k] = v
    return rec


def _log_arg(args):
    args = list(args)
    for k, a in enumerate(args[:-1]):
        if a == "--log":
            return args[k + 1]
    return None


def _report(t, cond, name, detail=None):
    t = t or tap.T.current
    if t is None:
        if not cond:
            print("not ok - %s" % name, flush=True)
        return cond
    return t.ok(cond, name, detail)


class Server:
    """A dsightd serve process started in the foreground.

    expect_rc: the exit status check() requires (0: a clean stop; 1 for a
    refused start; -9 for a server the test kills with SIGKILL)."""

    def __init__(self, report, *args, env=None, timeout=60, preexec_fn=None, user_cmd=None,
                 label=None, expect_rc=0):
        cmd = [DSIGHTD, "serve", report] + list(args)
        if user_cmd:
            cmd = user_cmd + cmd
        self.label = label or " ".join(os.path.basename(str(a)) for a in ["dsightd", "serve", report] + list(args))
        self.expect_rc = expect_rc
        self.log = _log_arg(args)
        self.checked = False
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=env, preexec_fn=preexec_fn)
        _procs.append(self.proc)
        _servers.append(self)
        self.line = ""
        self.record = {}
        deadline = time.time() + timeout
        buf = b""
        while b"\n" not in buf and time.time() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                buf += chunk
            elif self.proc.poll() is not None:
                break
        self.line = buf.decode(errors="replace").split("\n")[0]
        if self.line:
            self.record = parse_record(self.line)
        self.path = self.record.get("socket-path")
        self.err = None

    def alive(self):
        return self.proc.poll() is None

    def stderr_text(self, timeout=30):
        """Waits for exit and returns stderr."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if self.err is None:
            self.err = self.proc.stderr.read().decode(errors="replace")
        return self.err

    def stop(self):
        """SIGTERM, wait; returns (and keeps in self.err) the stderr text."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.err is None:
            try:
                self.err = self.proc.stderr.read().decode(errors="replace")
            except (ValueError, OSError):
                self.err = ""
        return self.err

    def check(self, t=None, expect_rc=None):
        """Stops the server if it still runs (SIGTERM), then reports two TAP
        lines: its exit status is expect_rc (default self.expect_rc) and its
        stderr and --log file hold no sanitizer report.  Returns stderr."""
        if expect_rc is not None:
            self.expect_rc = expect_rc
        err = self.stop()
        self.checked = True
        rc = self.proc.returncode
        _report(t, rc == self.expect_rc, "%s: exit status %s" % (self.label, self.expect_rc),
                "exit status %s\n%s" % (rc, (err or "")[-3000:]))
        logtxt = ""
        if self.log and os.path.exists(self.log):
            logtxt = open(self.log, errors="replace").read()
        rep = sanitizer_report(err) or sanitizer_report(logtxt)
        _report(t, rep is None, "%s: no sanitizer report on stderr or in its log" % self.label, rep)
        return err


def become_subreaper():
    """Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER):
    servers whose parent exits (--daemonize, an orphaned server) become its
    children, so their exit status can be collected.  Idempotent."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


class Daemon:
    """A server that is not this process's child by birth (--daemonize, or
    started by a process that went away), followed by pid once it has been
    reparented to this process (become_subreaper() first), and by its log
    (its stderr).  check() waits for its exit and reports like
    Server.check()."""

    def __init__(self, pid, log, label="daemon", expect_rc=0):
        self.pid = pid
        self.log = log
        self.label = label
        self.expect_rc = expect_rc
        self.returncode = None
        self.checked = False
        _servers.append(self)

    def wait(self, timeout):
        """Waits up to timeout seconds for the exit; True once it is reaped
        (returncode set).  Polls: a reparented process has no Popen."""
        deadline = time.time() + timeout
        while self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                # not (or no longer) our child: fall back to its existence
                try:
                    os.kill(self.pid, 0)
                except ProcessLookupError:
                    self.returncode = "unknown (not a child of the test)"
                    return True
                pid = 0
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return True
            if time.time() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def alive(self):
        return not self.wait(0)

    def log_text(self):
        return open(self.log, errors="replace").read() if self.log and os.path.exists(self.log) else ""

    def check(self, t=None, timeout=30):
        """Stops the daemon (SIGTERM) if it is still running after timeout
        seconds, then reports its exit status and its log."""
        if not self.wait(timeout):
            kill_pid(self.pid, signal.SIGTERM)
            if not self.wait(20):
                kill_pid(self.pid)
                self.wait(10)
        self.checked = True
        _report(t, self.returncode == self.expect_rc, "%s: exit status %s" % (self.label, self.expect_rc),
                "exit status %s\n%s" % (self.returncode, self.log_text()[-3000:]))
        rep = sanitizer_report(self.log_text())
        _report(t, rep is None, "%s: no sanitizer report in its log" % self.label, rep)
        return self.log_text()


def daemonize(report, *args, env=None, label=None, timeout=60):
    """Runs dsightd serve REPORT ARGS --daemonize as a subreaper, so the
    server is followed (Daemon) once its parent has returned.  Returns
    (CompletedProcess, record, Daemon or None)."""
    become_subreaper()
    r = tap.run([DSIGHTD, "serve", report] + list(args) + ["--daemonize"], env=env,
                stdin=subprocess.DEVNULL, timeout=timeout)
    rec = parse_record(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else {}
    d = None
    if rec.get("pid"):
        log = _log_arg(args) or (rec.get("socket-path", "") + ".log")
        d = Daemon(int(rec["pid"]), log, label=label or "dsightd --daemonize")
    return r, rec, d


def cleanup(t=None):
    """Checks every server not checked yet (see Server.check), then kills
    whatever is left."""
    for srv in list(_servers):
        if not srv.checked:
            try:
                srv.check(t)
            except Exception as e:  # noqa: BLE001
                _report(t, False, "%s: check" % srv.label, repr(e))
    del _servers[:]
    for p in _procs:
        if p.poll() is None:
            try:
                p.kill()
                p.wait(timeout=10)
            except Exception:
                pass
        for f in (p.stdout, p.stderr):
            try:
                if f:
                    f.close()
            except Exception:
                pass


def kill_pid(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


# A test that never calls cleanup() still has its servers checked when it
# ends (tap.T.done()).
tap.T.finishers.append(cleanup)


def frame(obj):
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


class Conn:
    """A raw protocol connection."""

    def __init__(self, path, timeout=30):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b""
        self.next_id = 1

    def request(self, method, params=None, rid=None):
        """A JSON-RPC request object with the next id (or rid)."""
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    def send(self, method, params=None, rid=None):
        msg = self.request(method, params, rid)
        self.s.sendall(frame(msg))
        return msg["id"]

    def raw(self, data):
        self.s.sendall(data)

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def recv_bytes(self):
        self._need(4)
        n = struct.unpack(">I", self.buf[:4])[0]
        self._need(4 + n)
        body = self.buf[4:4 + n]
        self.buf = self.buf[4 + n:]
        return body

    def recv(self):
        return json.loads(self.recv_bytes())

    def call(self, method, params=None):
        self.send(method, params)
        return self.recv()

    def closed_by_peer(self, timeout=10):
        """True when the server closes the connection (EOF) within timeout."""
        self.s.settimeout(timeout)
        try:
            while True:
                chunk = self.s.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self):
        try:
            self.s.close()
        except Exception:
            pass


def dsight(*args, env=None, timeout=120):
    return tap.run([DSIGHT] + list(args), env=env, timeout=timeout)


def wait_gone(path, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not os.path.lexists(path):
            return True
        time.sleep(0.05)
    return not os.path.lexists(path)


def sql_streams(path):
    """A session's open streamed sql answers (status sql_streams)."""
    conn = Conn(path, timeout=30)
    try:
        return conn.call("status")["result"]["sql_streams"]
    finally:
        conn.close()


def wait_until(cond, timeout=20):
    """Polls cond() every 50 ms until it holds or timeout s passed; its last value."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def rss_kb(pid, key="VmRSS:"):
    """A process's resident set (or another /proc status line: VmHWM:) in
    KiB; 0 when it cannot be read."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_exit(proc, timeout):
    try:
        proc.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def build_report(src, out):
    r = tap.run([tap.binpath("dsight"), "build", src, "-o", out])
    if r.returncode != 0:
        raise RuntimeError("dsight build failed: " + r.stderr)
    return out


def python_with_dsight(code, *args, timeout=120):
    """Runs Python code (with args in sys.argv[1:]) in a new interpreter that
    imports the dsight package of this tree with the library of the build
    under test (a sanitizer build's with its runtime preloaded:
    tap.sanitizer_preload)."""
    env = tap.sanitizer_preload(dict(
        os.environ, DSIGHT_LIBRARY=os.path.join(tap.BUILD, "lib", "libdsight.so"),
        PYTHONPATH=os.path.join(tap.TOP, "client", "python")))
    return tap.run([sys.executable, "-c", code, *args], env=env, timeout=timeout)

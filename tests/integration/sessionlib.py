"""sessionlib: helpers for the warm-session integration tests (stdlib only).

Starts dsightd servers (each on its own --path in a temp dir, or names with
XDG_RUNTIME_DIR pointed at a private temp dir), speaks the framed JSON-RPC
protocol directly, and always cleans up the processes it started.
"""
import json
import os
import select
import shlex
import signal
import socket
import struct
import subprocess
import time

import tap

DSIGHT = tap.binpath("dsight")
DSIGHTD = tap.binpath("dsightd")

_procs = []


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


class Server:
    """A dsightd serve process started in the foreground."""

    def __init__(self, report, *args, env=None, timeout=60, preexec_fn=None, user_cmd=None):
        cmd = [DSIGHTD, "serve", report] + list(args)
        if user_cmd:
            cmd = user_cmd + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=env, preexec_fn=preexec_fn)
        _procs.append(self.proc)
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


def cleanup():
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


def kill_pid(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


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

    def send(self, method, params=None, rid=None):
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.s.sendall(frame(msg))
        return rid

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

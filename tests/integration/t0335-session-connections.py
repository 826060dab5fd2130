#!/usr/bin/env python3
# tests/run: tsan (threads: also run on the ThreadSanitizer build)
"""Warm sessions: the connection table under idle and half-open clients.

1,500 idle connections never lock a new client out (the oldest idle ones
are closed to make room) and are closed after the idle time without a
request; half-open frames are closed after the frame time with an error
frame, and the memory they hold is bounded (both times shortened here with
dsightd's --conn-idle-timeout and --frame-timeout, 60 s and 10 s by
default); with every slot busy a new client is told "Too many
connections", not blamed for its uid; the CLI says what happened when the
session went away (crashed) or did not answer in time; the Python client
replaces a connection the session closed as idle."""
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
ASAN = "asan" in os.path.basename(tap.BUILD)
# the idle and frame times (dsightd --conn-idle-timeout, --frame-timeout):
# the idle one long enough that the eviction checks end before it
IDLE_S, FRAME_S = 20, 4
SLOW_SQL = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
            "WHERE x < 1000000000000) SELECT count(*) FROM c")


def connections(path):
    c = sl.Conn(path, timeout=60)
    try:
        return c.call("status")["result"]["connections"] - 1  # minus this one
    finally:
        c.close()


def connect_many(path, n):
    held = []
    for _ in range(n):
        k = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        k.connect(path)  # blocking: waits while the listen queue is full
        k.settimeout(30)
        held.append(k)
    return held


def close_all(socks):
    for k in socks:
        try:
            k.close()
        except OSError:
            pass


def wait_for(pred, timeout, step=0.5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


# The test holds about 2,000 sockets at once.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < 4096 and (hard == resource.RLIM_INFINITY or hard >= 4096):
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, hard))

try:
    report = sl.build_report(tap.FIXTURE, os.path.join(t.tmp, "report"))
    path = os.path.join(t.tmp, "c.sock")
    s = sl.Server(report, "--path", path, "--idle-timeout", "600",
                  "--conn-idle-timeout", str(IDLE_S), "--frame-timeout", str(FRAME_S))
    t.ok(s.alive(), "server started", s.line)
    pid = s.proc.pid

    # --- 1,500 idle connections: a new client still gets in ---
    t0 = time.time()
    idle = connect_many(path, 1500)
    # a few of them asked something once: idle after an answer
    for k in idle[-20:]:
        k.sendall(sl.frame({"jsonrpc": "2.0", "id": 1, "method": "status"}))
    for k in idle[-20:]:
        k.recv(65536)
    r = sl.dsight("query", "--remote", path, "summary", timeout=120)
    t.ok(r.returncode == 0 and '"schema"' in r.stdout,
         "with 1,500 idle connections open a CLI query succeeds", r.stderr)
    n = connections(path)
    t.ok(n <= 1024, "the table holds at most 1,024 connections (%d open)" % n)
    open_idle = 0
    for k in idle[:50]:
        k.setblocking(False)
        try:
            open_idle += k.recv(1) != b""
        except BlockingIOError:
            open_idle += 1
        except OSError:
            pass
    t.ok(open_idle < 50, "the oldest idle connections were closed to make room (%d of the first 50 open)"
         % open_idle)
    # ... for room, not for being idle: the idle time has not run out yet
    t.ok(time.time() - t0 < IDLE_S, "the checks above ended within the idle time (%.1f s of %d)"
         % (time.time() - t0, IDLE_S))

    # --- half-open frames: closed after FRAME_S, their memory bounded ---
    rss0 = sl.rss_kb(pid)
    half = connect_many(path, 300)
    chunk = b"x" * (400 << 10)
    for k in half:
        k.sendall(struct.pack(">I", 1 << 20) + chunk)
    time.sleep(1)
    grown = (sl.rss_kb(pid) - rss0) >> 10
    limit = 1024 if ASAN else 256
    t.ok(grown < limit, "300 half-open 1-MiB frames (400 KB sent each) add %d MiB (< %d)" % (grown, limit))
    r = sl.dsight("query", "--remote", path, "summary", timeout=120)
    t.ok(r.returncode == 0, "a CLI query succeeds beside them", r.stderr)
    got = {"timeout": 0, "closed": 0}

    def drain(k):
        k.settimeout(60)
        data = b""
        try:
            while True:
                b = k.recv(65536)
                if not b:
                    break
                data += b
        except OSError:
            pass
        if b"rest of a frame" in data:
            got["timeout"] += 1
        got["closed"] += 1
    ths = [threading.Thread(target=drain, args=(k,)) for k in half]
    for th in ths:
        th.start()
    for th in ths:
        th.join(90)
    t.ok(got["closed"] == 300, "every half-open connection is closed (%d of 300)" % got["closed"])
    t.ok(got["timeout"] > 0, "those still open after %d s get the error 'Timed out waiting for the rest "
         "of a frame' (%d)" % (FRAME_S, got["timeout"]))
    close_all(half)

    # --- the rest of the idle ones are closed after IDLE_S ---
    ok = wait_for(lambda: connections(path) == 0, IDLE_S - (time.time() - t0) + 60, step=1)
    t.ok(ok, "idle connections are closed after %d s (%d left)" % (IDLE_S, connections(path)))
    close_all(idle)
    t.ok(s.alive(), "the server is alive")
    r = sl.dsight("query", "--remote", path, "summary", timeout=120)
    t.ok(r.returncode == 0, "and answers", r.stderr)
    err = s.check(t)
    t.ok("to make room" in err and "idle connection(s)" in err,
         "evictions and idle closes are logged", err[-2000:])

    # --- every slot busy: "Too many connections" ---
    path2 = os.path.join(t.tmp, "busy.sock")
    lim = 160  # descriptors: the server then serves 160 - 64 = 96 at once

    def low_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (lim, lim))
    s2 = sl.Server(report, "--path", path2, "--idle-timeout", "600", preexec_fn=low_fds)
    t.ok(s2.alive(), "server with 160 descriptors started", s2.line)
    busy = []
    for k in range(lim - 64):
        c = sl.Conn(path2, timeout=60)
        c.send("query", {"kind": "sql", "sql": SLOW_SQL, "timeout": 3})
        busy.append(c)
    time.sleep(0.5)
    r = sl.dsight("query", "--remote", path2, "summary", timeout=120)
    t.ok(r.returncode == 1 and "Too many connections" in r.stderr and "uid" not in r.stderr
         and "user" not in r.stderr,
         "with every slot busy the CLI says: too many connections", r.stderr)
    r = sl.python_with_dsight(
        "import sys, dsight\n"
        "try:\n"
        "    dsight.connect(sys.argv[1])\n"
        "    print('connected')\n"
        "except dsight.DataError as exc:\n"
        "    print(exc)\n", path2)
    t.ok(r.stdout.startswith("Too many connections"), "Python says it too", r.stdout + r.stderr)
    for c in busy:
        c.close()
    # their queued statements are cancelled: room within moments, not
    # after 95 more statements of 3 s
    r = None
    t0 = time.time()
    while time.time() - t0 < 30:
        r = sl.dsight("query", "--remote", path2, "summary", timeout=120)
        if r.returncode == 0:
            break
        time.sleep(0.5)
    t.ok(r.returncode == 0, "once they hang up, a CLI query succeeds (after %.1f s)" % (time.time() - t0),
         r.stderr)
    s2.check(t)

    # --- the session goes away mid-query: the CLI says so ---
    path3 = os.path.join(t.tmp, "crash.sock")
    s3 = sl.Server(report, "--path", path3, "--idle-timeout", "600", expect_rc=-9)
    cli = subprocess.Popen([sl.DSIGHT, "query", "--remote", path3, "sql", "--sql", SLOW_SQL,
                            "--timeout", "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    os.kill(s3.proc.pid, signal.SIGKILL)
    out, err = cli.communicate(timeout=60)
    t.ok(cli.returncode == 1 and "went away before answering" in err and "user" not in err,
         "a crash mid-query: the CLI says the session went away", err)
    s3.check(t)

    # --- no answer in time: the CLI says it timed out ---
    path4 = os.path.join(t.tmp, "slow.sock")
    s4 = sl.Server(report, "--path", path4, "--idle-timeout", "600")
    os.kill(s4.proc.pid, signal.SIGSTOP)
    try:
        r = sl.dsight("query", "--remote", path4, "summary", env=sl.env_with(DSIGHT_REMOTE_TIMEOUT="1"),
                      timeout=60)
    finally:
        os.kill(s4.proc.pid, signal.SIGCONT)
    t.ok(r.returncode == 1 and "Timed out after 1 s" in r.stderr, "no answer in time: the CLI says it timed out",
         r.stderr)

    # --- Python: a connection closed as idle is replaced (a new
    # interpreter: the sanitizer build's library needs its runtime) ---
    r = sl.python_with_dsight(
        "import json, socket, sys, dsight\n"
        "ses = dsight.connect(sys.argv[1])\n"
        "first = ses.query('summary')\n"
        "for c in list(ses._s._conns):\n"
        "    c.sock.shutdown(socket.SHUT_RDWR)\n"
        "again = ses.query('summary')\n"
        "print('same' if first == again else 'differ')\n"
        "ses.close()\n", path4)
    t.ok(r.returncode == 0 and r.stdout.strip() == "same",
         "the Python client replaces a connection found closed and answers", r.stdout + r.stderr)
    s4.check(t)
finally:
    sl.cleanup(t)
sys.exit(t.done())

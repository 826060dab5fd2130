#!/usr/bin/env python3
"""Warm sessions: the files beside a socket under attack.  A planted symlink
or another owner's file as the log is refused (never followed, never
truncated); a failed start keeps the previous log and leaves no lock;
--path never takes over a live socket of another program, only a dead one;
ctl list never deletes a regular file named *.sock but reaps a dead socket;
a cache in WAL mode is refused before SQLite opens it (no -wal/-shm)."""
import os
import shutil
import socket
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()


def serve(*args, env=None):
    return tap.run([sl.DSIGHTD, "serve"] + list(args), env=env, timeout=60)


try:
    doc = os.path.join(t.tmp, "ev.json")
    shutil.copy(tap.FIXTURE, doc)
    report = sl.build_report(doc, os.path.join(t.tmp, "report"))

    # --- a symlink planted as <socket>.log is never followed ---
    victim = os.path.join(t.tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    os.chmod(victim, 0o600)
    sock = os.path.join(t.tmp, "sym.sock")
    os.symlink(victim, sock + ".log")
    r = serve(report, "--path", sock, "--daemonize")
    t.ok(r.returncode != 0 and "symlink" in r.stderr, "a symlinked log is refused", r.stderr)
    t.eq(open(victim).read(), "precious\n", "the symlink's target is untouched")
    t.ok(not os.path.lexists(sock) and not os.path.lexists(sock + ".lock"),
         "the refused start leaves no socket and no lock", os.listdir(t.tmp))

    # --- another owner's file as the log is neither truncated nor used ---
    other = os.path.join(t.tmp, "other.log")
    with open(other, "w") as f:
        f.write("not yours\n")
    if os.geteuid() == 0:
        os.chown(other, 65534, 65534)
        r = serve(report, "--path", os.path.join(t.tmp, "o.sock"), "--daemonize", "--log", other)
        t.ok(r.returncode != 0 and "belongs to uid 65534" in r.stderr,
             "root refuses a log file owned by another user", r.stderr)
        t.eq(open(other).read(), "not yours\n", "another owner's log is not truncated")
    else:
        t.ok(True, "# SKIP another owner's file needs root to create")
        t.ok(True, "# SKIP another owner's file needs root to create")

    # --- a failed start keeps the previous log and leaves no lock ---
    sock = os.path.join(t.tmp, "f.sock")
    with open(sock + ".log", "w") as f:
        f.write("the previous server's post-mortem\n")
    with open(sock, "w") as f:
        f.write("a regular file in the socket's place\n")
    r = serve(report, "--path", sock, "--daemonize")
    t.ok(r.returncode != 0 and "not a socket" in r.stderr, "start fails on a non-socket", r.stderr)
    t.eq(open(sock + ".log").read(), "the previous server's post-mortem\n",
         "a failed start does not truncate the log")
    t.ok(not os.path.lexists(sock + ".lock"), "a failed start leaves no lock file", os.listdir(t.tmp))

    # --- --path never takes over a live socket of another program ---
    live = os.path.join(t.tmp, "live.sock")
    other_srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other_srv.bind(live)
    other_srv.listen(4)
    r = serve(report, "--path", live, "--daemonize")
    t.ok(r.returncode != 0 and "live socket of another program" in r.stderr,
         "a live listener of another program is refused", r.stderr)
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(live)
        still = True
    except OSError:
        still = False
    probe.close()
    t.ok(still and os.path.exists(live), "the other program still owns its socket")
    t.ok(not os.path.lexists(live + ".lock"), "no lock left beside the other program's socket")
    other_srv.close()
    # the same path once that program is gone (its socket file remains, refusing)
    s = sl.Server(report, "--path", live)
    t.ok(s.alive() and s.path == live, "a dead socket is replaced", s.line + (s.stderr_text(1) or ""))
    s.stop()

    # --- ctl list: a regular *.sock survives, a dead socket is reaped ---
    xdg = os.path.join(t.tmp, "xdg")
    os.mkdir(xdg, 0o700)
    env = sl.env_with(XDG_RUNTIME_DIR=xdg)
    d = os.path.join(xdg, "dsight")
    os.mkdir(d, 0o700)
    regular = os.path.join(d, "notes.sock")
    with open(regular, "w") as f:
        f.write("keep me\n")
    dead = os.path.join(d, "dead.sock")
    ds = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ds.bind(dead)
    ds.close()  # the file stays, nothing listens
    r = sl.dsight("ctl", "list", env=env)
    t.eq((r.returncode, r.stdout.strip()), (0, "[]"), "ctl list lists no live session")
    t.ok(os.path.exists(regular) and open(regular).read() == "keep me\n",
         "ctl list does not delete a regular file named *.sock")
    t.ok(not os.path.lexists(dead), "ctl list reaps a dead socket")

    # --- a cache in WAL mode is refused before SQLite opens it ---
    wal = os.path.join(t.tmp, "wal")
    os.mkdir(wal)
    cache = os.path.join(wal, "trace-data.sqlite")
    shutil.copy(os.path.join(report, "trace-data.sqlite"), cache)
    db = sqlite3.connect(cache)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    with open(cache, "rb") as f:
        hdr = f.read(20)
    t.ok(hdr[18] == 2 and hdr[19] == 2, "the fixture cache is in WAL mode", hdr)
    before = sorted(os.listdir(wal))
    r = sl.dsight("query", cache, "summary")
    want = "%s: the cache is in WAL mode; rebuild the report" % os.path.realpath(cache)
    t.ok(r.returncode == 1 and want in r.stderr, "dsight query refuses a WAL cache", r.stderr)
    r = sl.dsight("query", wal, "summary")
    t.ok(r.returncode == 1 and want in r.stderr, "a report directory with a WAL cache too", r.stderr)
    r = serve(wal, "--path", os.path.join(t.tmp, "w.sock"))
    t.ok(r.returncode == 1 and want in r.stderr, "dsightd refuses to serve it", r.stderr)
    t.eq(sorted(os.listdir(wal)), before, "no -wal or -shm file appears beside the cache")
finally:
    sl.cleanup(t)
sys.exit(t.done())

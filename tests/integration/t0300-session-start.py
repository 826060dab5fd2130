#!/usr/bin/env python3
"""Warm sessions: startup record, names, --daemonize, ctl kill-server/status/list,
one server per name, restart after kill -9, socket directory rules, path length."""
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402

t = tap.T()
try:
    doc = os.path.join(t.tmp, "ev.json")
    shutil.copy(tap.FIXTURE, doc)
    xdg = os.path.join(t.tmp, "xdg")
    os.mkdir(xdg, 0o700)
    env = sl.env_with(XDG_RUNTIME_DIR=xdg, TMPDIR=t.tmp)

    # --- startup record, generated name, socket mode ---
    s = sl.Server(doc, env=env)
    rec = s.record
    t.ok(re.fullmatch(r"pid=\d+ session=\S+ socket-path=\S+ idle-timeout=1800s report=\S+ generation=[0-9a-f]{32}", s.line),
         "startup record has the fields of doc/sessions-protocol.md in order", s.line)
    t.ok(re.fullmatch(r"[a-z]+-[a-z]+-[a-z]+", rec.get("session", "")), "generated three-word name", rec)
    t.eq(rec.get("socket-path"), os.path.join(xdg, "dsight", rec.get("session", "") + ".sock"), "convention path under XDG_RUNTIME_DIR")
    t.eq(rec.get("report"), os.path.realpath(doc), "report is absolute")
    t.eq(int(rec.get("pid", 0)), s.proc.pid, "pid is the server's")
    st = os.stat(s.path)
    t.ok(stat.S_ISSOCK(st.st_mode) and (st.st_mode & 0o777) == 0o600, "socket mode 0600", oct(st.st_mode))
    t.eq(os.stat(os.path.join(xdg, "dsight")).st_mode & 0o777, 0o700, "session directory created 0700")
    name = rec["session"]

    # --- status and list ---
    r = sl.dsight("ctl", "status", name, env=env)
    t.eq(r.returncode, 0, "ctl status exits 0")
    stj = json.loads(r.stdout) if r.returncode == 0 else {}
    for k in ("session", "pid", "report", "socket_path", "generation", "started_utc", "uptime_s",
              "idle_timeout_s", "idle_start", "idle_s", "orphaned", "queries", "connections"):
        t.ok(k in stj, "status has %s" % k, stj)
    t.eq(stj.get("idle_timeout_s"), 1800, "status idle_timeout_s")
    t.eq(stj.get("idle_start"), "orphaned", "auto idle-start with a live parent is orphaned")
    t.eq(stj.get("orphaned"), False, "not orphaned while the starting process lives")
    t.eq(stj.get("generation"), rec.get("generation"), "status generation matches the record")

    r = sl.dsight("ctl", "list", env=env)
    lst = json.loads(r.stdout) if r.returncode == 0 else []
    t.ok(r.returncode == 0 and len(lst) == 1 and lst[0].get("session") == name and
         set(lst[0]) == {"session", "pid", "socket_path", "report", "generation", "idle_s"},
         "ctl list shows the live session", r.stdout + r.stderr)

    # --- a second server on a live name is refused ---
    s2 = sl.Server(doc, "--name", name, env=env)
    err2 = s2.stderr_text()
    t.ok(s2.proc.returncode not in (0, None) and
         ("A live session already holds %s. Pick another --name/--path or stop it with: dsight ctl kill-server %s" % (name, name)) in (err2 or ""),
         "second server on a live name refused with the message", err2)
    t.ok(s.alive(), "the first server keeps running")

    # --- kill-server ---
    r = sl.dsight("ctl", "kill-server", name, env=env)
    t.eq(r.stdout.strip(), "Stopped session %s (pid %d)" % (name, s.proc.pid), "kill-server reports the stop")
    t.ok(not os.path.exists(s.path) and not os.path.exists(s.path + ".lock"), "socket and lock removed")
    t.ok(sl.wait_exit(s.proc, 10) and s.proc.returncode == 0, "server exited 0")
    err = s.stderr_text()
    t.ok("kill-server" in err, "exit reason kill-server on stderr", err)
    r = sl.dsight("ctl", "kill-server", name, env=env)
    t.ok(r.returncode == 3 and "No live session at %s" % s.path in r.stderr, "kill-server with no live server exits 3", r.stderr)
    r = sl.dsight("ctl", "status", name, env=env)
    t.eq(r.returncode, 3, "status with no live server exits 3")
    r = sl.dsight("query", "--remote", name, "summary", env=env)
    want = "No live session at %s. Start one with: dsightd serve REPORT --name %s" % (s.path, name)
    t.ok(r.returncode == 3 and want in r.stderr and r.stderr.startswith('{"ok": false, "error": '),
         "query --remote with nothing listening: exit 3 and the message", r.stderr)

    # --- restart after kill -9: the next start on that name succeeds; list cleans ---
    s = sl.Server(doc, "--name", "crashy", env=env)
    t.ok(s.alive() and s.path, "server crashy started", s.line)
    os.kill(s.proc.pid, signal.SIGKILL)
    s.proc.wait()
    t.ok(os.path.exists(s.path), "kill -9 leaves the socket behind")
    s3 = sl.Server(doc, "--name", "crashy", env=env)
    t.ok(s3.alive() and s3.record.get("session") == "crashy", "restart after kill -9 succeeds", s3.line)
    r = sl.dsight("query", "--remote", "crashy", env=env)
    t.eq(r.returncode, 0, "the restarted server answers")
    os.kill(s3.proc.pid, signal.SIGKILL)
    s3.proc.wait()
    r = sl.dsight("ctl", "list", env=env)
    t.ok(r.returncode == 0 and json.loads(r.stdout) == [], "list shows no live session after a crash", r.stdout + r.stderr)
    t.ok(not os.path.exists(s3.path) and not os.path.exists(s3.path + ".lock"), "list removed the dead server's socket and lock")

    # list: a lock left without a socket is removed, a held one is kept
    import fcntl
    ddir = os.path.join(xdg, "dsight")
    ghost = os.path.join(ddir, "ghost.sock.lock")
    open(ghost, "w").close()
    held = os.path.join(ddir, "starting.sock.lock")
    hf = open(held, "w")
    fcntl.flock(hf, fcntl.LOCK_EX | fcntl.LOCK_NB)
    r = sl.dsight("ctl", "list", env=env)
    t.ok(r.returncode == 0 and not os.path.exists(ghost) and os.path.exists(held),
         "list removes an orphan lock and keeps one a live process holds", r.stdout + r.stderr)
    hf.close()
    os.unlink(held)

    # --- SIGTERM: clean exit, reason, files gone; --log duplicates stderr ---
    logf = os.path.join(t.tmp, "fg.log")
    s = sl.Server(doc, "--path", os.path.join(t.tmp, "term.sock"), "--log", logf, env=env)
    s.proc.send_signal(signal.SIGTERM)
    t.ok(sl.wait_exit(s.proc, 10) and s.proc.returncode == 0, "SIGTERM: exit 0")
    err = s.stderr_text()
    t.ok("signal TERM" in err, "SIGTERM: reason on stderr", err)
    t.ok(not os.path.exists(s.path) and not os.path.exists(s.path + ".lock"), "SIGTERM: socket and lock removed")
    logtxt = open(logf).read() if os.path.exists(logf) else ""
    t.ok("signal TERM" in logtxt and "pid=" in logtxt, "--log duplicates stderr into the file", logtxt)

    s = sl.Server(doc, "--path", os.path.join(t.tmp, "hup.sock"), env=env)
    s.proc.send_signal(signal.SIGHUP)
    t.ok(sl.wait_exit(s.proc, 10) and s.proc.returncode == 0 and "signal HUP" in s.stderr_text() and
         not os.path.exists(s.path), "SIGHUP: a clean stop too")

    # --- --daemonize returns once the socket accepts ---
    dpath = os.path.join(t.tmp, "bg.sock")
    r = tap.run([sl.DSIGHTD, "serve", doc, "--path", dpath, "--daemonize", "--idle-timeout", "60"], env=env,
                stdin=subprocess.DEVNULL, timeout=60)
    rec = sl.parse_record(r.stdout.strip()) if r.returncode == 0 else {}
    t.ok(r.returncode == 0 and rec.get("socket-path") == dpath, "--daemonize prints the record and exits 0", r.stdout + r.stderr)
    accepted = False
    try:
        c = socket.socket(socket.AF_UNIX)
        c.connect(dpath)
        c.close()
        accepted = True
    except OSError:
        pass
    t.ok(accepted, "--daemonize: the socket accepts when the parent returns")
    st = sl.dsight("ctl", "status", dpath, env=env)
    stj = json.loads(st.stdout) if st.returncode == 0 else {}
    t.ok(stj.get("orphaned") is True and stj.get("idle_start") == "last-query", "a daemonized server is orphaned from the start", st.stdout)
    r = sl.dsight("ctl", "kill-server", dpath, env=env)
    t.ok(r.returncode == 0 and r.stdout.startswith("Stopped session "), "kill-server stops the daemon", r.stdout + r.stderr)
    logtxt = open(dpath + ".log").read() if os.path.exists(dpath + ".log") else ""
    t.ok("kill-server" in logtxt, "daemon log (default <socket>.log) has the exit reason", logtxt)
    r = tap.run([sl.DSIGHTD, "serve", os.path.join(t.tmp, "missing"), "--path", dpath, "--daemonize"], env=env,
                stdin=subprocess.DEVNULL, timeout=60)
    t.ok(r.returncode != 0 and "missing" in r.stderr and r.stdout == "", "--daemonize relays the child's error", r.stderr)
    t.ok(not os.path.exists(dpath), "a failed start binds nothing")

    # --- unsafe directories ---
    def refused(xdgdir, what):
        e2 = sl.env_with(XDG_RUNTIME_DIR=xdgdir, TMPDIR=t.tmp)
        p = subprocess.run([sl.DSIGHTD, "serve", doc, "--name", "x"], env=e2, capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        t.ok(p.returncode != 0 and what in p.stderr, "unsafe directory refused: %s" % what, p.stderr)
        return p.stderr

    bad = os.path.join(t.tmp, "bad1")
    os.mkdir(bad, 0o700)
    os.mkdir(os.path.join(bad, "dsight"))
    os.chmod(os.path.join(bad, "dsight"), 0o770)
    msg = refused(bad, "group/other")
    t.ok("chmod 700" in msg, "the message says how to fix it", msg)
    bad = os.path.join(t.tmp, "bad2")
    os.mkdir(bad, 0o700)
    os.mkdir(os.path.join(bad, "dsight"), 0o700)
    if os.geteuid() == 0:
        os.chown(os.path.join(bad, "dsight"), 65534, 65534)
        refused(bad, "owned by uid 65534")
    else:
        t.ok(True, "# skip other-owner check (not root)")
    bad = os.path.join(t.tmp, "bad3")
    os.mkdir(bad, 0o700)
    os.mkdir(os.path.join(t.tmp, "elsewhere"), 0o700)
    os.symlink(os.path.join(t.tmp, "elsewhere"), os.path.join(bad, "dsight"))
    refused(bad, "symlink")
    # an unsafe XDG_RUNTIME_DIR itself is not used: fallback to TMPDIR/dsight-<uid>
    loose = os.path.join(t.tmp, "loose")
    os.mkdir(loose)
    os.chmod(loose, 0o777)
    e2 = sl.env_with(XDG_RUNTIME_DIR=loose, TMPDIR=t.tmp)
    s = sl.Server(doc, "--name", "fallback", env=e2)
    t.eq(s.path, os.path.join(t.tmp, "dsight-%d" % os.geteuid(), "fallback.sock"), "unsafe XDG_RUNTIME_DIR falls back to TMPDIR/dsight-<uid>")
    s.stop()

    # --- path length ---
    deep = os.path.join(t.tmp, "d" * 60, "e" * 60)
    os.makedirs(deep, mode=0o700)
    os.chmod(os.path.dirname(deep), 0o700)
    e2 = sl.env_with(XDG_RUNTIME_DIR=deep, TMPDIR=t.tmp)
    p = subprocess.run([sl.DSIGHTD, "serve", doc, "--name", "a-rather-long-session-name"], env=e2, capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    t.ok(p.returncode != 0 and "shorter --path" in p.stderr, "a too-long convention path is refused", p.stderr)
    p = subprocess.run([sl.DSIGHTD, "serve", doc, "--path", os.path.join(deep, "x" * 40 + ".sock")], env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    t.ok(p.returncode != 0 and "shorter --path" in p.stderr, "a too-long --path is refused", p.stderr)
    t.ok(not any(f.endswith(".sock") for f in os.listdir(deep)), "nothing truncated was bound")

    # --- idle-timeout forms ---
    for arg, want in (("90", "90s"), ("45s", "45s"), ("10m", "600s"), ("1h", "3600s"), ("0", "never"),
                      ("off", "never"), ("never", "never"), ("auto", "1800s")):
        s = sl.Server(doc, "--path", os.path.join(t.tmp, "forms.sock"), "--idle-timeout", arg, env=env)
        t.ok(" idle-timeout=%s " % want in s.line, "--idle-timeout %s -> idle-timeout=%s" % (arg, want), s.line)
        s.stop()

    # --- a wedged server does not hang the client ---
    wpath = os.path.join(t.tmp, "wedged.sock")
    wedged = socket.socket(socket.AF_UNIX)
    wedged.bind(wpath)
    wedged.listen(4)
    t0 = time.time()
    r = sl.dsight("query", "--remote", wpath, "summary", env=sl.env_with(DSIGHT_REMOTE_TIMEOUT="1"))
    t.ok(r.returncode == 1 and "Timed out" in r.stderr and time.time() - t0 < 10,
         "a server that never answers: the client times out (exit 1)", r.stderr)
    wedged.close()
    os.unlink(wpath)

    # --- addresses and usage ---
    r = sl.dsight("query", "--remote", "localhost:7000", env=env)
    t.ok(r.returncode == 2 and "not served yet" in r.stderr, "host:port is reserved: not served yet", r.stderr)
    r = sl.dsight("query", "--remote", "x", doc, "summary", env=env)
    t.eq(r.returncode, 2, "--remote with a dataset path is a usage error")
    p = subprocess.run([sl.DSIGHTD, "serve", doc, "--idle-timeout", "5x"], capture_output=True, text=True, timeout=30)
    t.ok(p.returncode == 2 and "--idle-timeout" in p.stderr, "bad --idle-timeout is a usage error", p.stderr)
    p = subprocess.run([sl.DSIGHTD, "serve", doc, "--name", "a.b"], capture_output=True, text=True, timeout=30)
    t.ok(p.returncode == 2 and "Invalid --name" in p.stderr, "bad --name is a usage error", p.stderr)
    p = subprocess.run([sl.DSIGHTD, "--help"], capture_output=True, text=True, timeout=30)
    t.ok(p.returncode == 0 and "--idle-start" in p.stdout, "dsightd --help")
    s = sl.Server(doc, "--path", os.path.join(t.tmp, "it's never.sock"), "--idle-timeout", "off", env=env)
    t.ok(" idle-timeout=never " in s.line and "socket-path='" in s.line and s.record.get("socket-path", "").endswith("it's never.sock"),
         "disabled timeout is idle-timeout=never; values shell-quoted when needed", s.line)
    s.stop()
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup()
    sys.exit(t.done())

#!/usr/bin/env python3
"""Warm sessions: startup record, names, --daemonize, ctl kill-server/status/list,
one server per name, restart after kill -9, socket directory rules, path length,
SIGINT/SIGTERM/SIGHUP, --path onto a file that is not a socket, server_time_us.
Every server's exit status and stderr/log are checked (sessionlib)."""
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
    stt = stj.get("server_time_us", {})
    t.ok(stt == {"samples": 0, "last": 0, "p50": 0, "p99": 0},
         "server_time_us before any query: samples 0, last/p50/p99 0", stj)
    for _ in range(3):
        sl.dsight("query", "--remote", name, "requests", env=env)
    c = sl.Conn(s.path)
    c.call("hello", {"protocol": 1, "client": "t"})
    st2 = c.call("status").get("result", {})
    c.close()
    stt = st2.get("server_time_us", {})
    t.ok(set(stt) == {"samples", "last", "p50", "p99"} and stt.get("samples") == 3 and
         all(isinstance(stt[k], int) and stt[k] > 0 for k in ("last", "p50", "p99")) and
         stt["p50"] <= stt["p99"] and st2.get("queries") == 3,
         "server_time_us after 3 queries: 3 samples (hello/status are not queries), last/p50/p99 > 0, p50 <= p99",
         st2)

    r = sl.dsight("ctl", "list", env=env)
    lst = json.loads(r.stdout) if r.returncode == 0 else []
    t.ok(r.returncode == 0 and len(lst) == 1 and lst[0].get("session") == name and
         set(lst[0]) == {"session", "pid", "socket_path", "report", "generation", "idle_s"},
         "ctl list shows the live session", r.stdout + r.stderr)

    # --- a second server on a live name is refused ---
    s2 = sl.Server(doc, "--name", name, env=env, expect_rc=1)
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
    s = sl.Server(doc, "--name", "crashy", env=env, expect_rc=-signal.SIGKILL)
    t.ok(s.alive() and s.path, "server crashy started", s.line)
    os.kill(s.proc.pid, signal.SIGKILL)
    s.proc.wait()
    t.ok(os.path.exists(s.path), "kill -9 leaves the socket behind")
    s3 = sl.Server(doc, "--name", "crashy", env=env, expect_rc=-signal.SIGKILL)
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

    for sig in (signal.SIGHUP, signal.SIGINT):
        nm = signal.Signals(sig).name[3:]
        s = sl.Server(doc, "--path", os.path.join(t.tmp, nm + ".sock"), env=env)
        s.proc.send_signal(sig)
        t.ok(sl.wait_exit(s.proc, 20) and s.proc.returncode == 0 and "signal %s" % nm in s.stderr_text() and
             not os.path.exists(s.path) and not os.path.exists(s.path + ".lock"),
             "SIG%s: a clean stop too (exit 0, reason 'signal %s', socket and lock removed)" % (nm, nm), s.err)

    # --- --path onto an existing file that is not a socket: refused, untouched ---
    plain = os.path.join(t.tmp, "plain.sock")
    with open(plain, "w") as f:
        f.write("precious\n")
    s = sl.Server(doc, "--path", plain, env=env, expect_rc=2)
    err = s.stderr_text()
    t.ok(s.proc.returncode == 2 and
         "%s exists and is not a socket; remove it or choose another --path" % plain in (err or "") and
         s.line == "", "--path onto a regular file: refused (exit 2, a usage error) with the message", (s.proc.returncode, err))
    t.ok(open(plain).read() == "precious\n" and not os.path.exists(plain + ".lock"),
         "the file is left as it was (and no lock file stays)")
    os.mkdir(os.path.join(t.tmp, "dir.sock"))
    s = sl.Server(doc, "--path", os.path.join(t.tmp, "dir.sock"), env=env, expect_rc=2)
    err = s.stderr_text()
    t.ok(s.proc.returncode == 2 and "exists and is not a socket" in (err or "") and
         os.path.isdir(os.path.join(t.tmp, "dir.sock")), "--path onto a directory: refused, left alone", err)

    # --- --daemonize returns once the socket accepts ---
    dpath = os.path.join(t.tmp, "bg.sock")
    r, rec, daemon = sl.daemonize(doc, "--path", dpath, "--idle-timeout", "60", env=env)
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
    if daemon:
        logtxt = daemon.check(t)  # exit status 0, no sanitizer report in its log
    else:
        logtxt = ""
    t.ok("kill-server" in logtxt, "daemon log (default <socket>.log) has the exit reason", logtxt)
    r = tap.run([sl.DSIGHTD, "serve", os.path.join(t.tmp, "missing"), "--path", dpath, "--daemonize"], env=env,
                stdin=subprocess.DEVNULL, timeout=60)
    t.ok(r.returncode != 0 and "missing" in r.stderr and r.stdout == "", "--daemonize relays the child's error", r.stderr)
    t.ok(not os.path.exists(dpath), "a failed start binds nothing")

    # --- unsafe directories ---
    def refused(xdgdir, what):
        e2 = sl.env_with(XDG_RUNTIME_DIR=xdgdir, TMPDIR=t.tmp)
        p = tap.run([sl.DSIGHTD, "serve", doc, "--name", "x"], env=e2, timeout=60, stdin=subprocess.DEVNULL)
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
        t.skip("unsafe directory refused: owned by another uid", "needs root to chown a directory")
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
    p = tap.run([sl.DSIGHTD, "serve", doc, "--name", "a-rather-long-session-name"], env=e2, timeout=60,
                stdin=subprocess.DEVNULL)
    t.ok(p.returncode != 0 and "shorter --path" in p.stderr, "a too-long convention path is refused", p.stderr)
    p = tap.run([sl.DSIGHTD, "serve", doc, "--path", os.path.join(deep, "x" * 40 + ".sock")], env=env,
                timeout=60, stdin=subprocess.DEVNULL)
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
    # the deadline is the behaviour under test: 1 s asked, a generous bound
    t.ok(r.returncode == 1 and "Timed out" in r.stderr and time.time() - t0 < 30,
         "a server that never answers: the client times out (exit 1)", r.stderr)
    wedged.close()
    os.unlink(wpath)

    # --- addresses and usage ---
    r = sl.dsight("query", "--remote", "localhost:1", env=env)
    t.ok(r.returncode == 3 and "No live session at http://localhost:1/" in r.stderr,
         "host:port with nothing listening: exit 3, no live session", r.stderr)
    r = sl.dsight("query", "--remote", "https://localhost:1/", env=env)
    t.ok(r.returncode == 2 and "plain http://" in r.stderr, "https:// is a usage error", r.stderr)
    r = sl.dsight("query", "--remote", "x", doc, "summary", env=env)
    t.eq(r.returncode, 2, "--remote with a dataset path is a usage error")
    p = tap.run([sl.DSIGHTD, "serve", doc, "--idle-timeout", "5x"], timeout=30)
    t.ok(p.returncode == 2 and "--idle-timeout" in p.stderr, "bad --idle-timeout is a usage error", p.stderr)
    p = tap.run([sl.DSIGHTD, "serve", doc, "--name", "a.b"], timeout=30)
    t.ok(p.returncode == 2 and "Invalid --name" in p.stderr, "bad --name is a usage error", p.stderr)
    p = tap.run([sl.DSIGHTD, "--help"], timeout=30)
    t.ok(p.returncode == 0 and "--idle-start" in p.stdout, "dsightd --help")
    s = sl.Server(doc, "--path", os.path.join(t.tmp, "it's never.sock"), "--idle-timeout", "off", env=env)
    t.ok(" idle-timeout=never " in s.line and "socket-path='" in s.line and s.record.get("socket-path", "").endswith("it's never.sock"),
         "disabled timeout is idle-timeout=never; values shell-quoted when needed", s.line)
    s.stop()
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
    sys.exit(t.done())

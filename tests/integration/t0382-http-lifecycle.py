#!/usr/bin/env python3
"""Sessions over HTTP: a rebuilt report under HTTP load (no answer mixes
generations, the viewer and shards follow the new generation, old shards
404), idle reaping with only HTTP clients (an idle keep-alive connection
does not keep the session alive; HTTP requests do), orphan reaping with
only HTTP clients, `ctl kill-server HOST:PORT`, SIGTERM during HTTP
requests; every exit removes socket, lock and token file."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httpsess as hs  # noqa: E402
import sessionlib as sl  # noqa: E402
import tap  # noqa: E402


def variant(src, dst, job):
    d = json.load(open(src))
    d["meta"]["job"] = job
    for m in d["metrics"]:
        m["points"] = [[p[0], p[1] + 1 if isinstance(p[1], (int, float)) and not isinstance(p[1], bool)
                        else p[1]] + list(p[2:]) for p in m["points"]]
    json.dump(d, open(dst, "w"))


def marker(page):
    m = re.search(rb'<meta name="dsight-live" content="([0-9a-f]*)">', page[:4000])
    return m.group(1).decode() if m else None


t = tap.T()
try:
    doc1 = os.path.join(t.tmp, "one.json")
    doc2 = os.path.join(t.tmp, "two.json")
    variant(tap.FIXTURE, doc1, "run-one")
    variant(doc1, doc2, "run-two")
    out = os.path.join(t.tmp, "report")
    sl.build_report(doc1, out)
    old_shards = set(os.listdir(os.path.join(out, "detail")))

    # --- a rebuild under HTTP load ---
    sock = os.path.join(t.tmp, "gen.sock")
    s, url, token = hs.start(out, sock, "--idle-timeout", "300")
    gen1 = hs.Client(url, token).rpc("hello")["result"]["generation"]
    seen, errors, stop = [], [], threading.Event()

    def load():
        c = hs.Client(url, token)
        while not stop.is_set():
            try:
                r = c.rpc("query", {"kind": "summary"})
                if "result" in r:
                    seen.append((r["result"]["generation"], r["result"]["data"]["meta"]["job"]))
                else:  # a rebuild in progress may fail a query, clearly
                    errors.append(r["error"]["message"])
                st, _, page = c.request("GET", "/")
                seen.append((marker(page), None)) if st == 200 else errors.append("GET / %d" % st)
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc))
        c.close()

    th = [threading.Thread(target=load) for _ in range(4)]
    for x in th:
        x.start()
    time.sleep(0.5)
    b = tap.run([sl.DSIGHT, "build", doc2, "-o", out], timeout=120)
    t.ok(b.returncode == 0, "the report is rebuilt while HTTP clients query it", b.stderr)
    time.sleep(1.0)
    stop.set()
    for x in th:
        x.join(60)
    gen2 = hs.Client(url, token).rpc("hello")["result"]["generation"]
    jobs = {}
    for g, job in seen:
        if job is not None:
            jobs.setdefault(g, set()).add(job)
    t.ok(gen1 != gen2 and jobs.get(gen1) == {"run-one"} and jobs.get(gen2) == {"run-two"} and len(jobs) == 2,
         "no answer mixes generations: each generation answered only its own data (%d answers)" % len(seen),
         jobs)
    pages = {g for g, job in seen if job is None}
    t.ok(pages <= {gen1, gen2} and gen2 in pages, "the viewer's live marker names an answered generation",
         pages)
    t.ok(all("generation" in e or "rebuilt" in e or "changed" in e for e in errors),
         "failures during the swap (if any) say why (%d)" % len(errors), errors[:5])
    c = hs.Client(url, token)
    st, _, page = c.request("GET", "/")
    t.eq(marker(page), gen2, "after the rebuild GET / is the new generation's viewer")
    new_shards = set(os.listdir(os.path.join(out, "detail")))
    gone = sorted(old_shards - new_shards)
    kept = sorted(new_shards)
    t.ok(gone, "the rebuild dropped some shard names", len(gone))
    codes = {c.request("GET", "/detail/" + n)[0] for n in gone}
    t.eq(codes, {404}, "the old generation's shards: 404 after the swap")
    codes = {c.request("GET", "/detail/" + n)[0] for n in kept}
    t.eq(codes, {200}, "the new generation's shards: 200")
    r = c.rpc("status")["result"]
    t.eq(r["generation"], gen2, "status: the new generation (the page's signal to reload)")

    # --- kill-server over HTTP (only HTTP clients) ---
    r = sl.dsight("ctl", "kill-server", url, env=sl.env_with(DSIGHT_TOKEN=token))
    t.ok(r.returncode == 0 and re.match(r"Stopped session \S+ \(pid \d+\)", r.stdout),
         "ctl kill-server HOST:PORT: Stopped session NAME (pid N)", r.stdout + r.stderr)
    t.ok(hs.files_gone(sock) and hs.wait_port_closed(url, 2),
         "after kill-server: port closed; socket, lock, token file gone")
    sl.wait_exit(s.proc, 20)
    err = s.check(t)
    t.ok("kill-server" in err, "exit reason kill-server", err[-300:])
    r = sl.dsight("ctl", "kill-server", url, env=sl.env_with(DSIGHT_TOKEN=token))
    t.ok(r.returncode == 3 and "No live session at " + url in r.stderr,
         "kill-server with nothing listening: exit 3", r.stderr)

    # --- idle reaping with only HTTP clients ---
    sock = os.path.join(t.tmp, "idle.sock")
    s, url, token = hs.start(out, sock, "--idle-timeout", "2", "--idle-start", "last-query")
    idle = hs.Client(url, token)
    idle.rpc("hello")              # a keep-alive connection left open
    busy = hs.Client(url, token)
    t0 = time.time()
    while time.time() - t0 < 3.5:  # HTTP requests keep it alive past 2 s
        st, _, _ = busy.request("GET", "/")
        time.sleep(0.4)
    t.ok(s.alive() and st == 200, "HTTP requests count as activity (alive after 3.5 s, timeout 2 s)")
    t1 = time.time()
    gone = sl.wait_gone(sock, 15)
    t.ok(gone and time.time() - t1 < 6, "an idle keep-alive HTTP connection does not keep it alive "
                                         "(reaped %.1f s after the last request)" % (time.time() - t1))
    sl.wait_exit(s.proc, 20)
    err = s.check(t)
    t.ok("idle for 2s" in err and hs.files_gone(sock), "idle exit: reason given, files removed", err[-300:])
    idle.close()
    busy.close()

    # --- orphan reaping with only HTTP clients ---
    sl.become_subreaper()
    sock = os.path.join(t.tmp, "orphan.sock")
    outf, errf = os.path.join(t.tmp, "o.out"), os.path.join(t.tmp, "o.err")
    parent = subprocess.Popen(
        ["sh", "-c", '"$0" serve "$1" --path "$2" --http 0 --idle-timeout 1s >"$3" 2>"$4" & wait',
         sl.DSIGHTD, out, sock, outf, errf], stdin=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(outf) and open(outf).read().endswith("\n")):
        time.sleep(0.05)
    rec = sl.parse_record(open(outf).read().strip()) if os.path.exists(outf) else {}
    pid = int(rec.get("pid", "0"))
    owned = sl.Daemon(pid, errf, label="dsightd --http owned by sh, then orphaned") if pid else None
    url = rec.get("http", "")
    token = open(sock + ".http").read().split()[1] if os.path.exists(sock + ".http") else ""
    c = hs.Client(url, token)
    time.sleep(2.5)
    r = c.rpc("status")["result"]
    t.ok(r["orphaned"] is False and owned and owned.alive(),
         "owned by a live parent: not reaped while idle 2.5x its timeout", r)
    parent.kill()
    parent.wait()
    if owned:
        t.ok(owned.wait(60) and owned.returncode == 0, "orphaned: reaped, exit 0", owned.returncode)
        t.ok(hs.files_gone(sock), "the orphan removed socket, lock and token file")
        owned.check(t)
    c.close()

    # --- SIGTERM while HTTP requests run ---
    sock = os.path.join(t.tmp, "term.sock")
    s, url, token = hs.start(out, sock, "--idle-timeout", "300")
    results = []

    def asker():
        c = hs.Client(url, token, timeout=30)
        try:
            results.append(c.rpc("query", {"kind": "sql", "sql": "select count(*) from events, events"}))
        except Exception as exc:  # noqa: BLE001
            results.append(repr(exc))
    th = threading.Thread(target=asker)
    th.start()
    time.sleep(0.3)
    s.proc.send_signal(signal.SIGTERM)
    th.join(40)
    t.ok(results and isinstance(results[0], dict), "SIGTERM: the HTTP request in flight gets an answer",
         results[:1])
    err = s.check(t)
    t.ok("signal TERM" in err and hs.files_gone(sock) and hs.wait_port_closed(url, 2),
         "SIGTERM: exit 0, files removed, port closed", err[-300:])
except Exception:  # noqa: BLE001
    import traceback
    t.ok(False, "unexpected exception", traceback.format_exc())
finally:
    sl.cleanup(t)
sys.exit(t.done())

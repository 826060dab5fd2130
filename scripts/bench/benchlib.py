#!/usr/bin/env python3
"""benchlib: what every benchmark of scripts/bench/ shares, in one place.

  - One cache directory, $BENCH_DIR (default /tmp/dsight-bench), where each
    synthetic capture and each report is made once and reused: a stamp file
    beside it records the generator's sources, its arguments and
    `dsight --version`, and a stale or missing one is rebuilt
    (BENCH_REBUILD=1 rebuilds regardless).
  - One median (statistics.median: the middle value, or the mean of the two
    middle values) and one p99 (nearest rank).
  - One line naming the machine's load.
  - One way to time a command: wall time from the monotonic clock, CPU
    time (user + system) from the child's own rusage.

Python benchmarks import it; shell and Node ones run it:

    scripts/bench/benchlib.py report PRESET [--requests N] [--scale F]
        makes (when needed) and prints the path of $BENCH_DIR/<name>
    scripts/bench/benchlib.py capture PRESET [--requests N] [--scale F]
        the same for the evidence document $BENCH_DIR/<name>.json
    scripts/bench/benchlib.py median|p99 [NUMBER...]
        of the numbers given, or read from stdin when none are
    scripts/bench/benchlib.py load
        "load average: A B C on N cores"
    scripts/bench/benchlib.py cold RUNS COMMAND...
        runs COMMAND (stdout discarded) RUNS times; prints the median wall
        and CPU milliseconds, "WALL CPU"; exits 1 when a run fails
    scripts/bench/benchlib.py dir
        prints $BENCH_DIR (created)
    scripts/bench/benchlib.py make
        brings the plain tree up to date (nothing when DSIGHT_BUILD is set)
    scripts/bench/benchlib.py baseline
        prints the build tree of the baseline commit (below), made once

The baseline: benchmarks print each figure beside the same figure of the
commit before the performance round (BASELINE_COMMIT, 2c6c386), measured in
the same run.  Its tree is $BASELINE_BUILD when set, else
$BENCH_DIR/baseline-<commit>/build, made once from `git archive` of that
commit (a few minutes); BASELINE=0 leaves the baseline out.

DSIGHT_BUILD names the build tree (default build/); when it is unset the
plain tree is brought up to date first (make -s -j2 all).
"""
import hashlib
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DSIGHT_BUILD", os.path.join(TOP, "build"))
BIN = os.path.join(BUILD, "bin")
BENCH_DIR = os.environ.get("BENCH_DIR", "/tmp/dsight-bench")
GEN_SOURCES = os.path.join(TOP, "scripts", "tools", "gen-capture")

_made = False


def usage(doc, options=()):
    """For a benchmark's main: -h or --help prints doc (its usage) and
    exits; an argument that starts with '-' and is not in options is an
    error (exit 2), so a mistyped option never starts a long run."""
    for a in sys.argv[1:]:
        if a in ("-h", "--help"):
            print(doc.strip())
            sys.exit(0)
        if a.startswith("-") and a not in options:
            sys.stderr.write("%s: unknown option %s (try --help)\n"
                             % (os.path.basename(sys.argv[0]), a))
            sys.exit(2)


def binary(name):
    """Path of the program NAME in the build tree (the plain tree made once
    per process)."""
    global _made
    if not _made and "DSIGHT_BUILD" not in os.environ:
        subprocess.run(["make", "-s", "-j2", "-C", TOP, "all"], check=True,
                       stdout=subprocess.DEVNULL)
    _made = True
    path = os.path.join(BIN, name)
    if not os.access(path, os.X_OK):
        sys.exit("benchlib: %s is missing; run make first" % path)
    return path


BASELINE_COMMIT = "2c6c386"


def baseline_build():
    """The build tree of BASELINE_COMMIT (made once), or None when
    BASELINE=0."""
    if os.environ.get("BASELINE") == "0":
        return None
    if os.environ.get("BASELINE_BUILD"):
        return os.environ["BASELINE_BUILD"]
    src = os.path.join(BENCH_DIR, "baseline-" + BASELINE_COMMIT)
    tree = os.path.join(src, "build")
    if os.access(os.path.join(tree, "bin", "dsight"), os.X_OK):
        return tree
    print("benchlib: building the baseline %s in %s (minutes, once)"
          % (BASELINE_COMMIT, src), file=sys.stderr, flush=True)
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    arch = subprocess.run(["git", "-C", TOP, "archive", BASELINE_COMMIT],
                          check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=arch, check=True)
    subprocess.run(["make", "-s", "-j2", "-C", src, "all"], check=True,
                   stdout=subprocess.DEVNULL)
    return tree


def baseline_binary(name):
    """Path of NAME in the baseline tree, or None (BASELINE=0)."""
    tree = baseline_build()
    return os.path.join(tree, "bin", name) if tree else None


def median(xs):
    return statistics.median(list(xs))


def p99(xs):
    """Nearest-rank 99th percentile."""
    xs = sorted(xs)
    return xs[max(0, math.ceil(0.99 * len(xs)) - 1)]


def load():
    return "load average: %s on %d cores" % (
        " ".join("%.2f" % x for x in os.getloadavg()), os.cpu_count())


def timed(argv, runs):
    """Runs argv runs times (stdout discarded); returns the lists of wall
    and CPU seconds, or raises CalledProcessError on a failed run."""
    walls, cpus = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t0)
        cpus.append(ru.ru_utime + ru.ru_stime)
        if os.waitstatus_to_exitcode(status):
            raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), argv)
    return walls, cpus


def build_measured(dsight, capture, report, extra=()):
    """Builds in a forked child (extra: more `dsight build` options) and
    reads that child's own rusage."""
    shutil.rmtree(report, ignore_errors=True)
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.dup2(w_out, 1)
        os.dup2(w_err, 2)
        os.execv(dsight, [dsight, "build", capture, *extra, "-o", report])
    os.close(w_out)
    os.close(w_err)
    out = b""
    err = b""
    # The outputs are small (one line each): read them to EOF.
    with os.fdopen(r_out, "rb") as f:
        out = f.read()
    with os.fdopen(r_err, "rb") as f:
        err = f.read()
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    return (os.waitstatus_to_exitcode(status), out.decode(), err.decode(),
            wall, ru.ru_maxrss * 1024, ru.ru_utime + ru.ru_stime)


def _name(preset, requests=None, scale=None, seed=None):
    name = preset
    if requests is not None:
        name += "-r%d" % int(requests)
    if scale is not None and float(scale) != 1:
        name += "-x%s" % scale
    if seed is not None:
        name += "-s%d" % int(seed)
    return name


def _gen_args(preset, requests, scale, seed=None):
    args = ["--preset", preset]
    if requests is not None:
        args += ["--requests", str(int(requests))]
    if scale is not None and float(scale) != 1:
        args += ["--scale", str(scale)]
    if seed is not None:
        args += ["--seed", str(int(seed))]
    return args


def _stamp(kind, args):
    h = hashlib.sha256()
    srcs = [GEN_SOURCES + ".c"] + sorted(
        os.path.join(GEN_SOURCES, f) for f in os.listdir(GEN_SOURCES))
    for f in srcs:
        with open(f, "rb") as fh:
            h.update(fh.read())
    h.update(repr((kind, args)).encode())
    h.update(subprocess.run([binary("dsight"), "--version"], capture_output=True).stdout)
    return h.hexdigest()


def _fresh(path, stamp):
    if os.environ.get("BENCH_REBUILD") == "1" or not os.path.exists(path):
        return False
    try:
        with open(path + ".stamp") as fh:
            return fh.read().strip() == stamp
    except OSError:
        return False


def _generate(args, out):
    print("benchlib: gen-capture %s -> %s" % (" ".join(args), out), file=sys.stderr, flush=True)
    subprocess.run([binary("gen-capture"), *args, "-o", out + ".tmp"], check=True)
    os.replace(out + ".tmp", out)


def capture(preset, requests=None, scale=None):
    """$BENCH_DIR/<name>.json, generated when missing or stale; kept."""
    args = _gen_args(preset, requests, scale)
    path = os.path.join(BENCH_DIR, _name(preset, requests, scale) + ".json")
    stamp = _stamp("capture", args)
    if not _fresh(path, stamp):
        os.makedirs(BENCH_DIR, exist_ok=True)
        _generate(args, path)
        with open(path + ".stamp", "w") as fh:
            fh.write(stamp + "\n")
    return path


def report(preset, requests=None, scale=None, seed=None):
    """$BENCH_DIR/<name>, a progressive report built once from its
    capture (generated for the build and removed after it)."""
    args = _gen_args(preset, requests, scale, seed)
    path = os.path.join(BENCH_DIR, _name(preset, requests, scale, seed))
    stamp = _stamp("report", args)
    if os.path.exists(os.path.join(path, "trace-data.sqlite")) and _fresh(path, stamp):
        return path
    os.makedirs(BENCH_DIR, exist_ok=True)
    doc = path + ".build.json"
    _generate(args, doc)
    print("benchlib: dsight build -> %s (a large preset takes minutes)" % path,
          file=sys.stderr, flush=True)
    shutil.rmtree(path, ignore_errors=True)
    try:
        subprocess.run([binary("dsight"), "build", doc, "-o", path], check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        os.remove(doc)
    with open(path + ".stamp", "w") as fh:
        fh.write(stamp + "\n")
    return path


def _main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, rest = argv[0], argv[1:]
    if cmd in ("report", "capture") and rest:
        opts = {"requests": None, "scale": None}
        k = 1
        while k < len(rest):
            key = rest[k].lstrip("-")
            if key not in opts or k + 1 >= len(rest):
                sys.exit("benchlib: unknown option %s" % rest[k])
            opts[key] = rest[k + 1]
            k += 2
        print((report if cmd == "report" else capture)(rest[0], **opts))
    elif cmd in ("median", "p99"):
        xs = [float(x) for x in (rest or sys.stdin.read().split())]
        if not xs:
            sys.exit("benchlib: %s of no numbers" % cmd)
        print(repr(median(xs) if cmd == "median" else p99(xs)))
    elif cmd == "load":
        print(load())
    elif cmd == "cold" and len(rest) >= 2:
        try:
            walls, cpus = timed(rest[1:], int(rest[0]))
        except subprocess.CalledProcessError as e:
            print("benchlib: %s failed (exit %d)" % (" ".join(e.cmd), e.returncode),
                  file=sys.stderr)
            return 1
        print("%.1f %.1f" % (median(walls) * 1e3, median(cpus) * 1e3))
    elif cmd == "dir":
        os.makedirs(BENCH_DIR, exist_ok=True)
        print(BENCH_DIR)
    elif cmd == "make":
        binary("dsight")
    elif cmd == "baseline":
        print(baseline_build() or "")
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

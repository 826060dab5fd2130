#!/usr/bin/env python3
"""t0140-build-publish: how a build publishes its report when the system
lacks renameat2 (the RENAME_NOREPLACE and RENAME_EXCHANGE fallbacks, seen as
a kernel or seccomp profile without the call: ENOSYS), the rollback when the
second rename of the fallback fails, the progress line on a terminal, and
the warning for a single-file page over 100 MB.

Fault injection: renameat2 is refused by a seccomp filter installed in the
build's process (what an old kernel or a container profile does); the
failing second rename comes from a tiny LD_PRELOAD library compiled here
(there is no natural way to make exactly that rename fail).
"""
import base64
import ctypes
import json
import os
import platform
import pty
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
DSIGHT = tap.binpath("dsight")




def staging_left(parent):
    return [n for n in os.listdir(parent) if ".build-" in n]


# ---- renameat2 refused (ENOSYS), as by an old kernel or a seccomp profile ----
# seccomp filter: x86_64 / aarch64 renameat2 -> ENOSYS, everything else allowed
ARCH = {"x86_64": (0xC000003E, 316), "aarch64": (0xC00000B7, 276)}


def no_renameat2():
    """preexec_fn: installs the filter in the child before exec."""
    audit, nr = ARCH[platform.machine()]
    BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
    ENOSYS = 38
    prog = [(BPF_LD_W_ABS, 0, 0, 4),          # A = arch
            (BPF_JEQ_K, 0, 3, audit),         # other arch: allow
            (BPF_LD_W_ABS, 0, 0, 0),          # A = syscall number
            (BPF_JEQ_K, 0, 1, nr),
            (BPF_RET_K, 0, 0, 0x00050000 | ENOSYS),  # SECCOMP_RET_ERRNO
            (BPF_RET_K, 0, 0, 0x7FFF0000)]    # SECCOMP_RET_ALLOW
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fp = Fprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        os._exit(120)
    if libc.prctl(22, 2, ctypes.byref(fp), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        os._exit(121)


base = os.path.join(t.tmp, "w")
os.mkdir(base)
rep = os.path.join(base, "rep")
if platform.machine() not in ARCH:
    t.skip("publishing without renameat2", "no seccomp syscall table for %s in this test" % platform.machine())
else:
    probe = subprocess.run([sys.executable, "-c", "import os; os.rename('/nonexistent-a', '/nonexistent-b')"],
                           preexec_fn=no_renameat2, capture_output=True, text=True)
    t.ok(probe.returncode == 1 and "FileNotFoundError" in probe.stderr,
         "the filter lets plain rename through", probe.stderr[-500:])
    probe = subprocess.run([sys.executable, "-c", "import ctypes; l = ctypes.CDLL(None, use_errno=True); "
                            "l.renameat2(-100, b'/nonexistent-a', -100, b'/nonexistent-b', 1); print(ctypes.get_errno())"],
                           preexec_fn=no_renameat2, capture_output=True, text=True)
    # the kernel's ENOSYS reaches the caller as EINVAL (glibc's renameat2
    # says so for a kernel without the call); a real call would say ENOENT
    t.eq(probe.stdout.strip(), "22", "the filter makes renameat2 fail (ENOSYS, EINVAL from glibc)")
    # a new output: renameat2(RENAME_NOREPLACE) -> ENOSYS -> rename
    r = tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep], preexec_fn=no_renameat2)
    t.ok(r.returncode == 0 and os.path.exists(os.path.join(rep, "manifest.json")),
         "without renameat2 a new report is published by rename (the RENAME_NOREPLACE fallback)", r.stderr)
    gen1 = json.loads(r.stdout)["generation"] if r.returncode == 0 else None
    q = tap.run([DSIGHT, "query", rep, "summary"])
    t.ok(q.returncode == 0 and json.loads(q.stdout).get("generation", gen1) == gen1, "and it answers", q.stderr)
    # an existing output: renameat2(RENAME_EXCHANGE) -> ENOSYS -> two renames
    r = tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep], preexec_fn=no_renameat2)
    gen2 = json.loads(r.stdout)["generation"] if r.returncode == 0 else None
    m = json.load(open(os.path.join(rep, "manifest.json")))
    t.ok(r.returncode == 0 and gen2 and gen2 != gen1 and m["generation"] == gen2,
         "without renameat2 an existing report is replaced by two renames (the RENAME_EXCHANGE fallback)", r.stderr)
    t.eq(staging_left(base), [], "the fallback leaves neither staging nor the previous report behind")
    t.eq(sorted(m["files"]), sorted(k for k, v in tap.tree_state(rep).items() if v != "dir"),
         "the replaced report is whole (manifest lists what is on disk)")

# ---- the second rename fails: the previous report is moved back ----
shim_c = os.path.join(t.tmp, "failsecond.c")
shim = os.path.join(t.tmp, "failsecond.so")
with open(shim_c, "w") as f:
    f.write(r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* Fails (EIO) the first rename onto $FAIL_RENAME_ONTO from a staging
 * directory (".build-" in its name); every other rename is real. */
int rename(const char *from, const char *to)
{
	static int done;
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	const char *onto = getenv("FAIL_RENAME_ONTO");
	if (!done && onto && !strcmp(to, onto) && strstr(from, ".build-")) {
		done = 1;
		errno = EIO;
		return -1;
	}
	return real(from, to);
}
''')
cc = shutil.which("cc") or shutil.which("gcc")
c = subprocess.run([cc, "-shared", "-fPIC", "-o", shim, shim_c, "-ldl"], capture_output=True, text=True)
if platform.machine() not in ARCH:
    t.skip("the second rename of the fallback fails", "no seccomp syscall table for %s in this test" % platform.machine())
elif t.ok(c.returncode == 0, "the fault-injection library compiles", c.stderr):
    if not os.path.exists(os.path.join(rep, "manifest.json")):
        tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep])
    before = tap.tree_state(base)
    env = dict(os.environ, LD_PRELOAD=shim, FAIL_RENAME_ONTO=os.path.realpath(rep),
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    # no renameat2 (so the two-rename fallback runs), and its second rename fails
    r = tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep], env=env, preexec_fn=no_renameat2)
    t.ok(r.returncode == 1 and r.stderr.startswith("dsight build: ") and "cannot publish the report at %s" %
         os.path.realpath(rep) in r.stderr and len(r.stderr.splitlines()) == 1 and r.stdout == "",
         "the second rename fails: one error line naming the report, exit 1", (r.returncode, r.stderr))
    t.ok(tap.tree_state(base) == before, "the previous report is moved back, byte-identical, nothing else left",
         sorted(set(before.items()) ^ set(tap.tree_state(base).items()))[:10])
    q = tap.run([DSIGHT, "query", rep, "summary"])
    t.eq(q.returncode, 0, "and it still answers")

# ---- the progress line on a terminal ----
def build_on_pty(args):
    """Runs dsight build with stderr on a pseudo-terminal; returns (rc,
    stdout, everything written to the terminal)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([DSIGHT, "build"] + args, stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not b:
            break
        chunks.append(b)
    out = p.stdout.read().decode()
    p.stdout.close()
    rc = p.wait(timeout=120)
    os.close(master)
    return rc, out, b"".join(chunks).decode(errors="replace")


rc, out, term = build_on_pty([tap.FIXTURE, "-o", rep])
CLR = "\r\x1b[K"
t.ok(rc == 0 and out.count("\n") == 1 and out.startswith('{"output":'), "on a terminal stdout still gets only the summary line",
     out)
for phase in ("reading", "indexing", "writing files", "publishing"):
    t.ok(CLR + "dsight build: " + phase in term, "the progress line shows '%s' on the terminal" % phase, repr(term))
t.ok(term.endswith(CLR) and "\n" not in term, "the progress line is rewritten in place and erased at the end", repr(term))
r = tap.run([DSIGHT, "build", tap.FIXTURE, "-o", rep])
t.eq((r.returncode, r.stderr), (0, ""), "not a terminal: no progress line")

# ---- a single-file page over 100 MB warns ----
# It writes, reads and encodes 100 MB several times (20-35 s of CPU): the
# plain build's full tier runs it (tap.matrix), the quick tier and the
# sanitizer build keep the small page's check below.
single = os.path.join(t.tmp, "single")
if tap.matrix(True, False):
    # A request carrying 100 MB of incompressible text puts ~100 MB of base64
    # into the embedded catalog; the warning names the sizes.
    doc = json.load(open(tap.FIXTURE))
    # (in 5 MB strings: one string over 64 MiB is refused as hostile input)
    blobs = [base64.b64encode(os.urandom(3_750_000)).decode() for _ in range(20)]
    doc["requests"][0]["issues"] = doc["requests"][0].get("issues", []) + blobs
    big = os.path.join(t.tmp, "big.json")
    with open(big, "w") as f:
        json.dump(doc, f)
    del doc, blobs
    r = tap.run([DSIGHT, "build", big, "--single-file", "-o", single], timeout=900)
    size = os.path.getsize(os.path.join(single, "index.html")) if r.returncode == 0 else 0
    lines = r.stderr.splitlines()
    t.ok(r.returncode == 0 and size > 100_000_000, "the single-file page is over 100 MB (%d bytes)" % size, r.stderr)
    t.ok(len(lines) == 1 and "the single-file index.html is %.1f MB" % (size / 1e6) in lines[0] and "over 100 MB" in lines[0]
         and "without --single-file" in lines[0], "the build warns once on stderr, naming the size and the progressive report",
         r.stderr)
    os.unlink(big)
    shutil.rmtree(single, ignore_errors=True)
r = tap.run([DSIGHT, "build", tap.FIXTURE, "--single-file", "-o", single])
t.eq((r.returncode, r.stderr), (0, ""), "a small single-file page: no warning")

sys.exit(t.done())

#!/usr/bin/env python3
"""The repository cites only itself: no file names a document outside it
(the old specification's file names or a shared/ folder), and every doc/
file a comment, test, script or page points to exists, with the section it
names (doc/query-semantics.md "nsys", also across a comment's line break);
every scripts/ path it names exists and every build/bin/ program it names
is built (dsight, dsightd or a tool of scripts/tools/).  The README stays a
user's page (at most 250 lines) whose relative links all resolve."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

t = tap.T()
os.chdir(tap.TOP)
files = [f for f in subprocess.run(["git", "ls-files"], capture_output=True,
                                   text=True, check=True).stdout.split()
         if os.path.isfile(f)]
me = os.path.relpath(os.path.abspath(__file__), tap.TOP)

FOREIGN = re.compile(r"shared/|\b(overview|queries|report|sessions|trace-format|"
                     r"nsight|analysis|catalog|browser|layout)\.md\b")
SCRIPT = re.compile(r"scripts/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")
PROGRAM = re.compile(r"build/bin/([A-Za-z0-9_-]+)")
PROGRAMS = {"dsight", "dsightd"} | {f[:-2] for f in os.listdir("scripts/tools") if f.endswith(".c")}
CITE = re.compile(r'(doc/[a-z-]+\.md),?((?:[ \t]|\n[ \t]*(?:\*|#|//)?)+"([^"\n]+)")?')

heads = {}
for f in os.listdir("doc"):
    if f.endswith(".md"):
        with open(os.path.join("doc", f), encoding="utf-8") as fh:
            heads["doc/" + f] = [l.lstrip("#").strip() for l in fh if l.startswith("#")]

foreign, missing_file, missing_section, cites = [], [], [], 0
missing_script, missing_program = [], []
for f in files:
    if f == me:
        continue
    try:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
    except (UnicodeDecodeError, OSError):
        continue
    for n, line in enumerate(text.splitlines(), 1):
        if FOREIGN.search(line):
            foreign.append("%s:%d: %s" % (f, n, line.strip()))
    plain = text.replace("\\-", "-")  # man pages escape their hyphens
    for m in SCRIPT.finditer(plain):
        if not os.path.exists(m.group(0).rstrip(".")):
            missing_script.append("%s: %s" % (f, m.group(0)))
    for m in PROGRAM.finditer(plain):
        if m.group(1) not in PROGRAMS:
            missing_program.append("%s: %s" % (f, m.group(0)))
    for m in CITE.finditer(text):
        cites += 1
        d, sec = m.group(1), m.group(3)
        if d not in heads:
            missing_file.append("%s: %s" % (f, d))
        elif sec and not any(sec == h or sec in h for h in heads[d]):
            missing_section.append('%s: %s "%s"' % (f, d, sec))

t.ok(not foreign, "no file cites a document outside the repository", "\n".join(foreign))
t.ok(cites > 30, "comments and pages cite doc/ (%d citations)" % cites)
t.ok(not missing_file, "every cited doc/ file exists", "\n".join(missing_file))
t.ok(not missing_section, "every cited section exists in its doc/ file",
     "\n".join(missing_section))
t.ok(not missing_script, "every scripts/ path named exists", "\n".join(missing_script))
t.ok(not missing_program, "every build/bin/ program named is built", "\n".join(missing_program))
with open("README.md", encoding="utf-8") as fh:
    readme = fh.read()
t.ok(readme.count("\n") <= 250, "README.md has at most 250 lines (%d)" % readme.count("\n"))
broken = []
for page in ("README.md", "doc/README.md", "client/python/README.md"):
    with open(page, encoding="utf-8") as fh:
        for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", fh.read()):
            if not os.path.exists(os.path.join(os.path.dirname(page), link)):
                broken.append("%s: %s" % (page, link))
t.ok(not broken, "every relative link of the README pages resolves", "\n".join(broken))
t.ok(set(heads) >= {"doc/README.md", "doc/evidence-document.md", "doc/report-files.md",
                    "doc/query-semantics.md", "doc/sessions-protocol.md",
                    "doc/nsight-import.md", "doc/viewer-api.md", "doc/architecture.md",
                    "doc/performance.md", "doc/development.md"},
     "doc/ holds the reference files", sorted(heads))
sys.exit(t.done())

"""dsight_build: the PEP 517 build backend of the dsight Python package.

Kept in the tree (pyproject.toml's backend-path) so that `pip install
client/python` needs no package index: it runs the checkout's Makefile to
build the engine library (build/lib/libdsight.so), then writes a wheel
holding the `dsight` modules and that library.  The wheel is specific to
this platform (it carries compiled code) but not to a Python version (the
library is loaded with ctypes, not as an extension module).
"""
import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # the checkout: client/python/..
NAME = "dsight"


def _version():
    try:
        with open(os.path.join(ROOT, "VERSION")) as f:
            return f.read().strip()
    except OSError:
        pass
    with open(os.path.join(ROOT, "Makefile")) as f:
        m = re.search(r"^VERSION\s*:?=\s*(\S+)", f.read(), re.M)
    if not m:
        raise RuntimeError("dsight_build: no version in %s" % ROOT)
    return m.group(1)


def _library():
    if not os.path.exists(os.path.join(ROOT, "Makefile")) or \
            not os.path.isdir(os.path.join(ROOT, "common")):
        raise RuntimeError("dsight_build: %s is not a dsight checkout; install "
                           "the package from client/python of a clone" % ROOT)
    jobs = str(os.cpu_count() or 2)
    r = subprocess.run(["make", "-s", "-C", ROOT, "-j" + jobs,
                        "build/lib/libdsight.so"],
                       stdout=sys.stderr, stderr=sys.stderr)
    if r.returncode != 0:
        raise RuntimeError("dsight_build: building libdsight.so failed "
                           "(run scripts/install-deps first)")
    return os.path.join(ROOT, "build", "lib", "libdsight.so")


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-" + plat


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Query DSight trace reports (in process or through a "
            "warm dsightd session)\nRequires-Python: >=3.9\n" % (NAME, version))


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (arcname, digest.rstrip(b"=").decode(), len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    di = "%s-%s.dist-info" % (NAME, version)
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    with open(os.path.join(metadata_directory, di, "METADATA"), "w") as f:
        f.write(_metadata(version))
    return di


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    lib = _library()
    tag = _tag()
    di = "%s-%s.dist-info" % (NAME, version)
    files = []
    pkg = os.path.join(HERE, NAME)
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py"):
            with open(os.path.join(pkg, fn), "rb") as f:
                files.append(("%s/%s" % (NAME, fn), f.read()))
    with open(lib, "rb") as f:
        files.append(("%s/libdsight.so" % NAME, f.read()))
    files.append(("%s/METADATA" % di, _metadata(version).encode()))
    files.append(("%s/WHEEL" % di, ("Wheel-Version: 1.0\nGenerator: "
                                    "dsight_build\nRoot-Is-Purelib: false\n"
                                    "Tag: %s\n" % tag).encode()))
    files.append(("%s/top_level.txt" % di, (NAME + "\n").encode()))
    record = [_record_line(n, d) for n, d in files]
    record.append("%s/RECORD,," % di)
    files.append(("%s/RECORD" % di, ("\n".join(record) + "\n").encode()))
    wheel = "%s-%s-%s.whl" % (NAME, version, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            info = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if n.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, d)
    return wheel

"""ctypes binding of libdsight.so (the C engine, client/python/native/dsapi.h).

The shared library ships inside the package (the wheel built by pip puts it
next to this file).  DSIGHT_LIBRARY names another copy, for development
against a build tree.
"""
import ctypes
import json
import os

from ._errors import DataError, QueryError

_ERR_USAGE = 2
_MSG_MAX = 4096


def _load():
    path = os.environ.get("DSIGHT_LIBRARY") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "libdsight.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        raise ImportError(
            "dsight: cannot load the engine library %s (%s); reinstall the "
            "package with pip from a dsight checkout" % (path, exc)) from None
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    lib.dsapi_open.argtypes = [cp, ctypes.POINTER(vp), cp, sz]
    lib.dsapi_clone.argtypes = [vp, ctypes.POINTER(vp), cp, sz]
    lib.dsapi_close.argtypes = [vp]
    lib.dsapi_close.restype = None
    lib.dsapi_query.argtypes = [vp, cp, ctypes.POINTER(vp),
                                ctypes.POINTER(sz), cp, sz]
    lib.dsapi_resolve.argtypes = [cp, cp, sz, cp, sz, cp, sz]
    lib.dsapi_resolve.restype = ctypes.c_int
    lib.dsapi_generation.argtypes = [vp]
    lib.dsapi_generation.restype = cp
    lib.dsapi_describe.argtypes = []
    lib.dsapi_describe.restype = vp
    lib.dsapi_version.argtypes = []
    lib.dsapi_version.restype = cp
    lib.dsapi_free.argtypes = [vp]
    lib.dsapi_free.restype = None
    for f in (lib.dsapi_open, lib.dsapi_clone, lib.dsapi_query):
        f.restype = ctypes.c_int
    return lib


_lib = _load()


def _raise(code, buf):
    msg = buf.value.decode("utf-8", "replace")
    if code == _ERR_USAGE:
        raise QueryError(msg)
    raise DataError(msg)


def version():
    return _lib.dsapi_version().decode()


def resolve(address):
    """(socket path, message when nothing listens there) for an address."""
    path = ctypes.create_string_buffer(256)
    shown = ctypes.create_string_buffer(_MSG_MAX)
    msg = ctypes.create_string_buffer(_MSG_MAX)
    rc = _lib.dsapi_resolve(os.fsencode(address), path, 256, shown, _MSG_MAX,
                            msg, _MSG_MAX)
    if rc:
        _raise(rc, msg)
    return os.fsdecode(path.value), shown.value.decode("utf-8", "replace")


def describe():
    """The tables of kinds and parameters, as the engine describes them."""
    p = _lib.dsapi_describe()
    if not p:
        raise MemoryError("dsight: out of memory")
    try:
        return json.loads(ctypes.string_at(p).decode("utf-8"))
    finally:
        _lib.dsapi_free(p)


class Handle:
    """One open dataset for one thread (the C handle is not shared)."""

    def __init__(self, path=None, parent=None):
        h = ctypes.c_void_p()
        msg = ctypes.create_string_buffer(_MSG_MAX)
        if parent is None:
            rc = _lib.dsapi_open(os.fsencode(path), ctypes.byref(h), msg,
                                 _MSG_MAX)
        else:
            rc = _lib.dsapi_clone(parent._h, ctypes.byref(h), msg, _MSG_MAX)
        if rc:
            _raise(rc, msg)
        self._h = h

    def query_text(self, params_json):
        """The engine's JSON text for an RPC params object text."""
        out = ctypes.c_void_p()
        n = ctypes.c_size_t()
        msg = ctypes.create_string_buffer(_MSG_MAX)
        rc = _lib.dsapi_query(self._h, params_json.encode("utf-8"),
                              ctypes.byref(out), ctypes.byref(n), msg,
                              _MSG_MAX)
        if rc:
            _raise(rc, msg)
        try:
            return ctypes.string_at(out, n.value).decode("utf-8")
        finally:
            _lib.dsapi_free(out)

    def generation(self):
        return _lib.dsapi_generation(self._h).decode()

    def close(self):
        if self._h:
            _lib.dsapi_close(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

"""dsight: query DSight trace reports from Python.

Two ways in, one answer: what `dsight query` prints, parsed with json.loads
(integers beyond 64 bits stay exact Python ints; reals are the same doubles).

    import dsight
    with dsight.open("./report") as ds:            # in process (the C engine)
        worst = ds.query("requests", sort="-ttft_ms", limit=5)
    with dsight.connect("calm-blue-otter") as s:   # a warm `dsightd serve`
        page = s.query("nsys", profile=3, start=600, end=601, limit=100)

    dsight.TraceDataset.from_path("./report").query("summary")   # same as open

query(kind, **params) takes the parameters by their RPC names (listed
below); a list gives several values (worker=["decode-0", "prefill-0"]),
None leaves a parameter unset.  Errors: QueryError (usage and validation,
the engine's message), DataError (data and I/O), NoSession (nothing listens
at a session address; the message says how to start one).

Handles are context managers and may be shared between threads: each
thread queries through its own clone of the dataset (or its own session
connection).
"""
import json as _json
import math as _math
import threading as _threading

from . import _native
from ._errors import DataError, Error, NoSession, QueryError
from ._session import Session as _Session
from ._session import SqlRows as _SqlRows

__all__ = ["open", "connect", "Dataset", "Session", "TraceDataset",
           "QueryError", "DataError", "NoSession", "Error", "KINDS",
           "PARAMETERS", "__version__"]

__version__ = _native.version()
_TABLE = _native.describe()
#: The query kinds, in the engine's order.
KINDS = tuple(k["name"] for k in _TABLE["kinds"])
#: The query parameters by RPC name: {name: {"type", "default", "flag", "kinds", "help"}}.
PARAMETERS = {p["name"]: p for p in _TABLE["params"] if p["name"] != "kind"}


def _jsonable(v):
    if isinstance(v, float) and not _math.isfinite(v):
        # What the CLI client sends for a non-finite value, so validation
        # answers with the same message as a local query.
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _check_text(name, v):
    # A str that cannot be UTF-8 (a lone surrogate) is a usage error, as
    # the CLI says of invalid UTF-8, not an encoder's traceback.
    for s in (v if isinstance(v, (list, tuple)) else (v,)):
        if isinstance(s, str):
            try:
                s.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise QueryError("%s is not valid Unicode text (a lone "
                                 "surrogate at character %d)"
                                 % (name, exc.start)) from None


def _params(kind, params):
    unknown = sorted(k for k in params if k not in PARAMETERS)
    if unknown:
        raise QueryError("Unknown query parameter '%s'; choose from %s"
                         % (unknown[0], ", ".join(PARAMETERS)))
    _check_text("kind", kind)
    body = {"kind": kind}
    for k, v in params.items():
        if v is not None:
            _check_text(k, v)
            body[k] = _jsonable(v)
    return body


class _Queryable:
    def query(self, kind="summary", **params):
        """Runs one query; returns the parsed JSON answer (a dict)."""
        return _json.loads(self.query_json(kind, **params))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Dataset(_Queryable):
    """A dataset opened in process: a report directory, its
    trace-data.sqlite, or an evidence document (.json or gzip).  A rebuilt
    report is reopened by itself before the next query."""

    def __init__(self, path):
        self.path = str(path)
        self._root = _native.Handle(self.path)
        self._local = _threading.local()
        self._local.h = self._root
        self._lock = _threading.Lock()
        self._clones = []

    def _handle(self):
        h = getattr(self._local, "h", None)
        if h is None:
            if self._root is None:
                raise DataError("the dataset is closed")
            with self._lock:
                h = _native.Handle(parent=self._root)
                self._clones.append(h)
            self._local.h = h
        return h

    def query_json(self, kind="summary", **params):
        """The answer as the engine's JSON text (what `dsight query`
        prints, without the newline)."""
        body = _json.dumps(_params(kind, params), ensure_ascii=False,
                           allow_nan=False)
        if self._root is None:
            raise DataError("the dataset is closed")
        return self._handle().query_text(body)

    @property
    def generation(self):
        """The generation id of the report as last queried."""
        return self._handle().generation()

    def close(self):
        with self._lock:
            clones, self._clones = self._clones, []
            root, self._root = self._root, None
        for h in clones:
            h.close()
        if root is not None:
            root.close()
        self._local = _threading.local()


class Session(_Queryable):
    """A warm session (`dsightd serve REPORT --name NAME`), by name or socket
    path: the same answers as `dsight query --remote`."""

    def __init__(self, address):
        self._s = _Session(str(address))
        self.address = self._s.address
        self.socket_path = self._s.path
        #: The server's answer to hello (session, pid, report, generation).
        self.hello = self._s._conn().hello

    def query_json(self, kind="summary", **params):
        """The answer as JSON text (compact, as the engine writes it)."""
        data = self._s.query_params(_params(kind, params))
        return _json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def query(self, kind="summary", **params):
        return self._s.query_params(_params(kind, params))

    def sql_rows(self, sql, **params):
        """The rows of one sql statement as they are computed: an iterable
        of rows (lists) whose columns, row_count and truncated attributes
        fill in as it goes (max_rows up to 1,000,000, no 16 MiB cap: the
        batches come as frames on the socket, as NDJSON lines over HTTP).
        Stopping early closes the connection, which ends the statement."""
        return _SqlRows(self._s, _params("sql", dict(params, sql=sql)))

    def status(self):
        """The session's status object (as `dsight ctl status` prints)."""
        return self._s.status()

    def close(self):
        self._s.close()


def open(path):  # noqa: A001 - the natural name, as in io.open
    """Opens a report directory, a trace-data.sqlite or an evidence
    document in process."""
    return Dataset(path)


def connect(address):
    """Connects to a warm session by name (`calm-blue-otter`), socket path,
    or HTTP address (`127.0.0.1:9001`, `http://127.0.0.1:9001/?token=T`,
    a session started with `--http`); NoSession when nothing listens
    there."""
    return Session(address)


class TraceDataset(Dataset):
    """The name DSight users know: TraceDataset.from_path(path).query(...)."""

    @classmethod
    def from_path(cls, path):
        return cls(path)


def _describe():
    lines = [__doc__, "Kinds:", ""]
    for k in _TABLE["kinds"]:
        lines.append("    %-13s %s" % (k["name"], k.get("help", "")))
    lines += ["", "Parameters (RPC name, type, default, CLI flag):", ""]
    for name, p in PARAMETERS.items():
        d = p.get("default")
        lines.append("    %-13s %-8s %-10s %s" % (
            name, p.get("type", ""), "-" if d is None else _json.dumps(d),
            p.get("flag") or ""))
        lines.append("        %s (%s)" % (p.get("help", ""),
                                           ", ".join(p.get("kinds", []))))
    return "\n".join(lines)


__doc__ = _describe()

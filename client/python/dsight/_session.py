"""A warm session's socket, spoken from Python.

The frames and messages are those of `dsight query --remote`: a 4-byte
big-endian length, then one JSON-RPC 2.0 object; `hello` first, then
`query` requests whose result is {"generation", "data"}.  The address is
resolved by the engine library (names, the socket directory rules, paths),
so a name means the same socket here as for the CLI.
"""
import json
import socket
import struct
import threading

from . import _frames, _http, _native
from ._errors import DataError, NoSession, rpc_result

PROTOCOL = 1
FRAME_MAX = 64 << 20 | 1 << 16   # the largest reply (64 MiB) plus the envelope
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 60.0              # above the longest sql time limit (30 s)



class _Closed(DataError):
    """The session closed the connection before any byte of an answer (it
    closes connections idle for 60 s): the call may be sent again on a new
    connection."""


class _Conn:
    """One connection (one thread's)."""

    def __init__(self, path, shown):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(CONNECT_TIMEOUT)
        try:
            self.sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            self.sock.close()
            raise NoSession(shown) from None
        except OSError as exc:
            self.sock.close()
            raise DataError("cannot connect to %s: %s" % (path, exc.strerror
                                                          or exc)) from None
        self.sock.settimeout(READ_TIMEOUT)
        self.next_id = 1
        self.answered = 0
        self.hello = self.call("hello", {"protocol": PROTOCOL,
                                         "client": "dsight-python/" +
                                         _native.version()})

    def _send(self, obj):
        body = json.dumps(obj, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def _read_exact(self, n, first=False):
        chunks = []
        while n:
            try:
                b = self.sock.recv(min(n, 1 << 20))
            except ConnectionResetError:
                if not (first and not chunks):
                    raise
                b = b""
            if not b and first and not chunks:
                raise _Closed("The session closed the connection without "
                              "answering")
            if not b:
                raise DataError("The session closed the connection")
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        try:
            try:
                self._send({"jsonrpc": "2.0", "id": rid, "method": method,
                            "params": params})
            except (BrokenPipeError, ConnectionResetError):
                pass  # an answer sent before it closed is still readable
            (n,) = struct.unpack(">I", self._read_exact(4, first=True))
            if n > FRAME_MAX:
                raise DataError("Malformed response from the session")
            msg = json.loads(self._read_exact(n).decode("utf-8"))
        except socket.timeout:
            raise DataError("The session did not answer within %.0f s"
                            % READ_TIMEOUT) from None
        except (ValueError, UnicodeDecodeError):
            raise DataError("Malformed response from the session") from None
        except DataError:
            raise
        except OSError as exc:
            raise DataError("Lost the session: %s" % (exc.strerror or exc)
                            ) from None
        # an error with a null id: the session refused the connection
        # (too many connections, another user's session)
        if not isinstance(msg, dict) or (msg.get("id") != rid and not (
                msg.get("id") is None and "error" in msg)):
            raise DataError("Malformed response from the session")
        self.answered += 1
        return rpc_result(msg)

    def _frame(self):
        (n,) = struct.unpack(">I", self._read_exact(4))
        if n > FRAME_MAX:
            raise DataError("Malformed response from the session")
        return json.loads(self._read_exact(n).decode("utf-8"))

    def _count_reply(self):
        self.answered += 1

    def stream(self, params, rows):
        """Sends an sql query with stream_rows and yields its batches of
        rows as they come; rows (an SqlRows) gets the columns first and
        row_count and truncated at the end.  The connection is unusable
        unless the generator ran to its end (Session drops it)."""
        rid = self.next_id
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": rid, "method": "query",
                    "params": dict(params, stream_rows=True)})
        try:
            yield from _frames.batches(self._frame, rid, rows,
                                       self._count_reply)
        except socket.timeout:
            raise DataError("The session did not answer within %.0f s"
                            % READ_TIMEOUT) from None
        except (ValueError, UnicodeDecodeError, KeyError, TypeError):
            raise DataError("Malformed response from the session") from None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class SqlRows:
    """The rows of a streamed sql answer (Session.sql_rows), iterated as
    they arrive.  columns (and generation) are known once iteration
    started; row_count and truncated once it ended."""

    def __init__(self, session, params):
        self.columns = None
        self.generation = None
        self.row_count = None
        self.truncated = None
        self._session = session
        self._params = params

    def __iter__(self):
        s = self._session
        c = s._conn()   # the socket's, or HTTP's (NDJSON lines)
        done = False
        try:
            for batch in c.stream(self._params, self):
                yield from batch
            done = True
        finally:
            if not done:   # frames of this answer may still come: drop it
                s._drop(c)


class Session:
    """A connection to a warm session (`dsightd serve`), by name or socket
    path.  query() answers exactly what `dsight query --remote` prints,
    parsed.  Safe to share between threads: each thread gets its own
    connection.  The session closes connections idle for 60 s: a call
    that finds its connection closed before any answer is sent again,
    once, on a new one (queries only read)."""

    def __init__(self, address):
        self.address = address
        if _http.is_http(address):
            # HOST:PORT or http://HOST:PORT/: the session's HTTP listener
            self.path, self._shown = None, _http.parse(address)[2]
        else:
            self.path, self._shown = _native.resolve(address)
        self._local = threading.local()
        self._conns = []
        self._lock = threading.Lock()
        self._conn()   # fail now, not on the first query

    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None:
            c = (_http.HttpConn(self.address) if self.path is None
                 else _Conn(self.path, self._shown))
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def call(self, method, params=None):
        """One raw JSON-RPC call (hello, status, query...); returns the
        result.  A connection that served before and is found closed
        (the session closes idle ones) is replaced once."""
        c = self._conn()
        try:
            return c.call(method, params or {})
        except _Closed:
            if not c.answered:
                raise
        self._local.conn = None
        with self._lock:
            if c in self._conns:
                self._conns.remove(c)
        c.close()
        return self._conn().call(method, params or {})

    def _drop(self, c):
        """Closes c and forgets it (its thread gets a new one)."""
        if getattr(self._local, "conn", None) is c:
            self._local.conn = None
        with self._lock:
            if c in self._conns:
                self._conns.remove(c)
        c.close()

    def query_params(self, params):
        return self.call("query", params)["data"]

    def status(self):
        """The session's status object (`dsight ctl status`)."""
        return self.call("status")

    def close(self):
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            c.close()
        self._local = threading.local()

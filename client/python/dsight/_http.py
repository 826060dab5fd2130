"""A warm session reached over HTTP (`dsightd serve REPORT --http PORT`).

The same JSON-RPC requests as the socket, one per `POST /rpc`, with the
session's token as `Authorization: Bearer`.  The token comes, in this
order, from `?token=` in the address, `DSIGHT_TOKEN`, or the same user's
session files (`<socket>.http`, one line `URL TOKEN`) in the session
directory whose URL names the same listener (127.0.0.1, localhost and
[::1] count as one host).  Standard library only (http.client).
"""
import http.client
import json
import os
import re
import socket
import stat

from . import _frames, _native
from ._errors import DataError, Error, NoSession, QueryError, rpc_result

PROTOCOL = 1
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 60.0
_LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}
_ADDR = re.compile(r"^(?:http://)?(\[[0-9A-Fa-f:.]+\]|[^/:?\[\]]+):(\d+)/?"
                   r"(?:\?token=([0-9A-Fa-f]+))?$", re.I)


def is_http(address):
    """True when address names an HTTP listener (as `dsight` decides)."""
    if "://" in address:
        return True
    m = re.search(r":(\d+)/?$", address)
    return m is not None


def parse(address):
    """(host, port, url, token or None); QueryError when malformed."""
    if "://" in address and not address.lower().startswith("http://"):
        raise QueryError("Unsupported address %s: sessions speak plain "
                         "http:// (use an ssh tunnel for a remote node)"
                         % address)
    m = _ADDR.match(address)
    if not m or not 1 <= int(m.group(2)) <= 65535:
        raise QueryError("Bad address %s: expected HOST:PORT or "
                         "http://HOST:PORT/" % address)
    host, port = m.group(1), int(m.group(2))
    return host, port, "http://%s:%d/" % (host, port), m.group(3)


def _same(h1, p1, h2, p2):
    return p1 == p2 and (h1.lower() == h2.lower() or
                         (h1.lower() in _LOOPBACK and h2.lower() in _LOOPBACK))


def find_token(host, port, token=None):
    """The token for host:port, or None."""
    if token:
        return token
    if os.environ.get("DSIGHT_TOKEN"):
        return os.environ["DSIGHT_TOKEN"]
    try:
        # the session directory, as the engine resolves it for names
        d = os.path.dirname(_native.resolve("x")[0])
        names = os.listdir(d)
    except (OSError, DataError, QueryError):
        return None
    for n in names:
        if not n.endswith(".http"):
            continue
        try:
            fd = os.open(os.path.join(d, n), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
                continue
            line = os.read(fd, 1024).decode("utf-8", "replace").split("\n")[0]
        finally:
            os.close(fd)
        url, _, tok = line.partition(" ")
        try:
            h, p, _, _ = parse(url)
        except QueryError:
            continue
        if tok and _same(h, p, host, port):
            return tok
    return None


class HttpConn:
    """One keep-alive HTTP connection (one thread's), with the interface of
    the socket connection: call(method, params), hello, answered, close."""

    def __init__(self, address):
        self.host, self.port, self.url, tok = parse(address)
        self.token = find_token(self.host, self.port, tok)
        self.shown = ("No live session at %s. Start one with: dsightd serve "
                      "REPORT --http %d" % (self.url, self.port))
        self._c = None
        self.next_id = 1
        self.answered = 0
        self._connect()
        self.hello = self.call("hello", {"protocol": PROTOCOL,
                                         "client": "dsight-python/" +
                                         _native.version()})

    def _connect(self):
        host = self.host.strip("[]")
        try:
            s = socket.create_connection((host, self.port), CONNECT_TIMEOUT)
        except ConnectionRefusedError:
            raise NoSession(self.shown) from None
        except OSError as exc:
            raise DataError("cannot connect to %s: %s" % (
                self.url, exc.strerror or exc)) from None
        s.settimeout(READ_TIMEOUT)
        self._c = http.client.HTTPConnection(host, self.port,
                                             timeout=READ_TIMEOUT)
        self._c.sock = s

    def _request(self, body, accept=None):
        """Sends one POST /rpc; returns the response, its body unread.  A
        keep-alive connection the session closed while idle is replaced
        once (nothing was answered on it)."""
        headers = {"Content-Type": "application/json",
                   "Host": "%s:%d" % (self.host, self.port)}
        if accept:
            headers["Accept"] = accept
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        for attempt in (0, 1):
            try:
                if self._c is None:
                    self._connect()
                self._c.request("POST", "/rpc", body=body, headers=headers)
                return self._c.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError, http.client.CannotSendRequest):
                # an idle keep-alive connection the session closed
                self.close()
                if attempt:
                    raise DataError("The session at %s closed the connection"
                                    % self.url) from None
            except socket.timeout:
                self._timed_out()
            except OSError as exc:
                self._lost(exc)
        raise DataError("unreachable")

    def _timed_out(self):
        self.close()
        raise DataError("The session did not answer within %.0f s"
                        % READ_TIMEOUT) from None

    def _lost(self, exc):
        self.close()
        raise DataError("Lost the session at %s: %s" % (
            self.url, getattr(exc, "strerror", None) or exc)) from None

    def _post(self, body):
        r = self._request(body)
        try:
            return r.status, r.read()
        except socket.timeout:
            self._timed_out()
        except (OSError, http.client.HTTPException) as exc:
            self._lost(exc)

    def _body(self, status, data, rid):
        """The JSON-RPC reply object of a one-piece body (HTTP errors
        raised)."""
        if status == 401:
            raise DataError("The session at %s refused the token; give it "
                            "with DSIGHT_TOKEN=TOKEN or %s?token=TOKEN, or "
                            "run as the user who started it" % (self.url,
                                                                 self.url))
        try:
            msg = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise DataError("Malformed response from the session") from None
        if status != 200:
            said = msg.get("error") if isinstance(msg, dict) else None
            raise DataError("The session at %s answered HTTP %d%s" % (
                self.url, status, ": " + said if said else ""))
        if not isinstance(msg, dict) or msg.get("id") not in (rid, None):
            raise DataError("Malformed response from the session")
        self.answered += 1
        return msg

    def _rpc(self, rid, method, params):
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                           "params": params}, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")

    def stream(self, params, rows):
        """Sends an sql query with stream_rows, asking for NDJSON, and
        yields its batches of rows as the lines come (the socket's frames,
        one a line); rows (an SqlRows) gets the columns first and row_count
        and truncated at the end.  A statement refused before its first row
        is one JSON body.  The connection is unusable unless the generator
        ran to its end (Session drops it)."""
        rid = self.next_id
        self.next_id += 1
        r = self._request(self._rpc(rid, "query",
                                    dict(params, stream_rows=True)),
                          accept="application/x-ndjson")
        try:
            ctype = (r.getheader("Content-Type") or "").split(";")[0]
            if ctype.strip().lower() != "application/x-ndjson":
                yield _frames.step(self._body(r.status, r.read(), rid),
                                   rid, rows)[0]
                return
            def line():
                got = r.readline()
                if not got:
                    self.close()
                    raise DataError("The session at %s ended the answer "
                                    "without its final reply" % self.url)
                return json.loads(got.decode("utf-8"))

            def reply():
                r.read()   # the end of the chunked body: it stays open
                self.answered += 1
            yield from _frames.batches(line, rid, rows, reply)
        except Error:
            raise   # the session's answer (an error reply), or said above
        except socket.timeout:
            self._timed_out()
        except (ValueError, UnicodeDecodeError, KeyError, TypeError):
            self.close()
            raise DataError("Malformed response from the session") from None
        except (OSError, http.client.HTTPException) as exc:
            # a chunked body cut short: the session's side went away
            self._lost(exc)

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        status, data = self._post(self._rpc(rid, method, params))
        return rpc_result(self._body(status, data, rid))

    def close(self):
        if self._c is not None:
            try:
                self._c.close()
            except OSError:
                pass
        self._c = None


"""httpsess: helpers for the tests of sessions over HTTP (stdlib only).

Starts `dsightd serve ... --http 0` through sessionlib (so every server is
checked and cleaned up the same way), reads its URL from the startup
record and its token from <socket>.http, and speaks HTTP/1.1 with
http.client (one keep-alive connection per Client) or raw sockets.
"""
import http.client
import json
import os
import socket
import time
import urllib.parse

import sessionlib as sl


def start(report, sock, *args, env=None):
    """A server on --path sock with --http 0; (server, url, token)."""
    s = sl.Server(report, "--path", sock, "--http", "0", *args, env=env)
    url = s.record.get("http", "")
    token = None
    try:
        with open(sock + ".http") as f:
            u, _, token = f.read().strip().partition(" ")
    except OSError:
        pass
    return s, url, token


def hostport(url):
    u = urllib.parse.urlsplit(url)
    return u.hostname, u.port


class Client:
    """One keep-alive HTTP connection to a session."""

    def __init__(self, url, token=None, timeout=30):
        self.host, self.port = hostport(url)
        self.token = token
        self.timeout = timeout
        self.c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        self.next_id = 1

    def request(self, method, path, body=None, headers=None, auth=True):
        """(status, headers dict (lower-case names), body bytes)."""
        shown = "[%s]" % self.host if ":" in self.host else self.host
        h = {"Host": "%s:%d" % (shown, self.port)}
        if auth and self.token:
            h["Authorization"] = "Bearer " + self.token
        if body is not None and "Content-Type" not in (headers or {}):
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        for attempt in (0, 1):
            try:
                self.c.request(method, path, body=body, headers=h)
                r = self.c.getresponse()
                data = r.read()
                hd = {k.lower(): v for k, v in r.getheaders()}
                if hd.get("connection", "").lower() == "close":
                    self.c.close()
                return r.status, hd, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.c.close()
                if attempt:
                    raise

    def rpc_raw(self, method, params=None, rid=None):
        """The raw JSON-RPC response body of one call."""
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        st, _, body = self.request("POST", "/rpc", json.dumps(msg).encode())
        if st != 200:
            raise RuntimeError("HTTP %d: %r" % (st, body[:300]))
        return body

    def rpc(self, method, params=None):
        return json.loads(self.rpc_raw(method, params))

    def close(self):
        self.c.close()


def raw(url, data, timeout=10, read=True):
    """Sends raw bytes on a new connection; returns what comes back until
    the server closes or timeout (bytes)."""
    s = socket.create_connection(hostport(url), timeout=timeout)
    s.sendall(data)
    out = b""
    if read:
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                out += b
        except (socket.timeout, ConnectionResetError):
            pass
    s.close()
    return out


def wait_port_closed(url, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(hostport(url), timeout=1).close()
        except ConnectionRefusedError:
            return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def files_gone(sock):
    return not any(os.path.exists(sock + sfx) for sfx in ("", ".lock", ".http"))

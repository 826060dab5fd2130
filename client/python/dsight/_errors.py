"""The exceptions of the dsight package."""


class Error(Exception):
    """Base class of every dsight error."""


class QueryError(Error, ValueError):
    """A usage or validation error: the engine's message, as `dsight query`
    prints it with exit status 2 (RPC error -32602)."""


class DataError(Error, OSError):
    """A data or I/O error: unreadable or corrupt data, a report that cannot
    be opened, a response too large (`dsight query` exit status 1)."""


class NoSession(Error, ConnectionError):
    """No warm session listens at the address (`dsight query --remote` exit
    status 3).  The message names the resolved socket and how to start one."""


_INVALID_PARAMS = -32602


def rpc_result(msg):
    """The result of a JSON-RPC response object; its error raised as
    QueryError (-32602: usage and validation) or DataError."""
    if "error" in msg:
        err = msg["error"] or {}
        text = str(err.get("message", "error"))
        if err.get("code") == _INVALID_PARAMS:
            raise QueryError(text)
        raise DataError(text)
    return msg.get("result")

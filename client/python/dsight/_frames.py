"""The messages of a streamed sql answer, whichever transport carried them.

A `query` with stream_rows is answered by `rows` notifications (no id; the
first names the columns) and then the reply with the request's id: its
result (row_count, truncated; the rows too when the answer came in one
piece) or its error.  The socket carries each as a frame, HTTP as an NDJSON
line or, refused before any row, as the one body.
"""
from ._errors import DataError, rpc_result


def step(msg, rid, rows):
    """Takes one message of request rid's answer into rows (an SqlRows):
    returns (the rows it carries, whether it was the final reply).  The
    final reply's error is raised (rpc_result); anything else than these
    messages is a DataError."""
    if not isinstance(msg, dict):
        raise DataError("Malformed response from the session")
    if msg.get("method") == "rows" and "id" not in msg:
        batch = msg.get("params") or {}
        if not isinstance(batch, dict):
            raise DataError("Malformed response from the session")
        if "columns" in batch:
            rows.columns = batch["columns"]
            rows.generation = batch.get("generation")
        return batch.get("rows", []), False
    if msg.get("id") != rid:
        raise DataError("Malformed response from the session")
    result = rpc_result(msg)
    data = result["data"]
    got = []
    if rows.columns is None:  # answered in one reply
        rows.columns = data["columns"]
        rows.generation = result.get("generation")
        got = data["rows"]
    rows.row_count = data["row_count"]
    rows.truncated = data["truncated"]
    return got, True


def batches(next_msg, rid, rows, on_reply):
    """Yields the batches of request rid's answer, each message read by
    next_msg(); on_reply() runs when the reply (a message with an id)
    comes, before it is taken."""
    while True:
        msg = next_msg()
        if isinstance(msg, dict) and "id" in msg:
            on_reply()
        got, final = step(msg, rid, rows)
        if got or not final:
            yield got
        if final:
            return

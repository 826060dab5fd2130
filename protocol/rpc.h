/*
 * rpc: the JSON-RPC 2.0 messages of the session protocol
 * (doc/sessions-protocol.md).
 *
 * Server side: parse a request frame into method/id/params, and write
 * results and errors.  A result is written as an envelope around text the
 * caller appends itself, so the engine's JSON is embedded verbatim.
 * Client side: write requests and pick a response apart without re-emitting
 * any number (the raw text of "result" and its members is located with
 * yajl, never rebuilt).
 */
#ifndef DSIGHT_RPC_H
#define DSIGHT_RPC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define RPC_PROTOCOL 1     /* the version `hello` negotiates */

/* The methods of the session protocol. */
#define RPC_HELLO "hello"
#define RPC_QUERY "query"
#define RPC_STATUS "status"
#define RPC_SHUTDOWN "shutdown"
/* The notification that carries a batch of a streamed sql answer (server
 * to client; the query's "stream_rows": true asks for it). */
#define RPC_ROWS "rows"
/* How a batch of a streamed answer begins, as the server writes it. */
#define RPC_ROWS_PREFIX "{\"jsonrpc\":\"2.0\",\"method\":\"" RPC_ROWS "\""

enum {
	RPC_PARSE_ERROR = -32700,      /* invalid JSON */
	RPC_INVALID_REQUEST = -32600,  /* not a JSON-RPC 2.0 request, bad protocol, oversized frame */
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,   /* usage and validation errors of the engine */
	RPC_DATA_ERROR = -32000,       /* data or I/O error of the query */
	RPC_GENERATION_ERROR = -32001, /* the report's new generation could not be opened */
	RPC_TOO_LARGE = -32002,        /* the response would exceed FRAME_RESPONSE_MAX */
	RPC_INTERNAL_ERROR = -32003,   /* out of memory and the like */
	RPC_BUSY = -32004,             /* too many connections: try again */
};

/* A parsed request.  root owns everything; the other fields borrow. */
struct rpc_request {
	json_t *root;
	const char *method;
	json_t *id;     /* NULL: a notification (no reply) */
	json_t *params; /* NULL when absent */
	int is_response; /* not a request but a response (result or error, no method) */
};

/* Flags of rpc_parse_request. */
enum {
	RPC_STRICT = 1, /* duplicate keys are invalid JSON; the id must be a
	                 * string or an integer (MCP) */
};

/*
 * Parses one request frame.  Returns 0, or RPC_PARSE_ERROR /
 * RPC_INVALID_REQUEST with the message in e; on error req->id still points
 * at the request's id when one could be read (reply with it), else NULL
 * (reply with null).  Always call rpc_request_free afterwards.
 */
int rpc_parse_request(const char *text, size_t len, int flags,
                      struct rpc_request *req, struct err *e);
void rpc_request_free(struct rpc_request *req);

/* Maps an ERR_* code to the RPC error code (doc/sessions-protocol.md "Error codes"). */
int rpc_code_for_err(int err_code);
/* The CLI exit status for an RPC error code: 2 for -32602, else 1. */
int rpc_exit_status(int rpc_code);

/* Writes {"jsonrpc":"2.0","id":<id>,"result": (id NULL: null); the caller
 * appends the result value and then calls rpc_result_close. */
void rpc_result_open(struct buf *b, const json_t *id);
void rpc_result_close(struct buf *b);
/* Starts a batch of a streamed answer to request id:
 * {"jsonrpc":"2.0","method":"rows","params":{"id":id  -- the caller
 * appends its members (",\"rows\":[...]") and "}}". */
void rpc_rows_open(struct buf *b, const json_t *id);
/* Writes a complete error response. */
void rpc_error(struct buf *b, const json_t *id, int code, const char *message);
/* Writes a complete result response around a JSON tree (borrowed). */
void rpc_result_tree(struct buf *b, const json_t *id, const json_t *result);

/* The params of hello: {"protocol":RPC_PROTOCOL,"client":client}. */
void rpc_hello_params(struct buf *b, const char *client);
/* Starts the result of hello: {"protocol":RPC_PROTOCOL,"server":server
 * (the caller appends further members and the closing brace). */
void rpc_hello_result_open(struct buf *b, const char *server);

/* Client: writes {"jsonrpc":"2.0","id":id,"method":method,"params":...};
 * params_json is raw JSON text (NULL: no params member). */
void rpc_request_write(struct buf *b, int64_t id, const char *method,
                       const char *params_json);

/* A located member: raw text [text, text+len), found = 0 when absent. */
struct rpc_span {
	const char *text;
	size_t len;
	int found;
};

/*
 * Locates the raw text of top-level members of the JSON object json (nkeys
 * keys, spans filled in the same order).  The whole text is validated.
 * Returns 0, or ERR_DATA when json is not a valid JSON object.
 */
int rpc_members(const char *json, size_t len, const char *const *keys,
                struct rpc_span *spans, size_t nkeys, struct err *e);

/* A response picked apart (or, is_rows, a batch of a streamed answer:
 * the raw text of its params' columns, when present, and rows arrays,
 * located in the same pass). */
struct rpc_response {
	int is_rows;
	struct rpc_span columns, rows; /* when is_rows */
	int is_error;
	int code;                   /* when is_error */
	char message[ERR_MSG_MAX];  /* when is_error */
	struct rpc_span result;     /* raw text when !is_error */
	struct rpc_span id;
};

/* Parses a response frame.  Returns 0 or ERR_DATA ("Malformed response
 * from the session: ...").  r->result points into text. */
int rpc_parse_response(const char *text, size_t len, struct rpc_response *r,
                       struct err *e);

#endif

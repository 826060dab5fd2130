/* rpc: JSON-RPC 2.0 messages of the session protocol (see rpc.h). */
#include "rpc.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "base/utf8.h"

#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

int rpc_parse_request(const char *text, size_t len, int flags,
                      struct rpc_request *req, struct err *e)
{
	json_error_t je;
	json_t *v;
	int strict = flags & RPC_STRICT;

	memset(req, 0, sizeof *req);
	/* NUL is allowed in strings so that the parameter decoder can name
	 * the parameter holding one; the envelope's own strings refuse it */
	req->root = json_loadb(text, len,
	                       JSON_ALLOW_NUL | (strict ? JSON_REJECT_DUPLICATES : 0), &je);
	if (!req->root) {
		err_set(e, ERR_USAGE, "Invalid JSON: %s", je.text);
		return RPC_PARSE_ERROR;
	}
	if (!json_is_object(req->root)) {
		err_set(e, ERR_USAGE, "Invalid request: not a JSON object");
		return RPC_INVALID_REQUEST;
	}
	req->is_response = !json_object_get(req->root, "method") &&
	                   (json_object_get(req->root, "result") ||
	                    json_object_get(req->root, "error"));
	v = json_object_get(req->root, "id");
	if (v && (json_is_string(v) || json_is_integer(v) || (!strict && json_is_null(v))))
		req->id = v;
	else if (v) {
		err_set(e, ERR_USAGE, strict ? "Invalid request: id must be a string or an integer"
		                             : "Invalid request: id must be an integer, a string or null");
		return RPC_INVALID_REQUEST;
	}
	v = json_object_get(req->root, "jsonrpc");
	if (!json_is_string(v) || json_string_length(v) != 3 ||
	    strcmp(json_string_value(v), "2.0") != 0) {
		err_set(e, ERR_USAGE, "Invalid request: jsonrpc must be \"2.0\"");
		return RPC_INVALID_REQUEST;
	}
	v = json_object_get(req->root, "method");
	if (!json_is_string(v)) {
		err_set(e, ERR_USAGE, "Invalid request: method must be a string");
		return RPC_INVALID_REQUEST;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		err_set(e, ERR_USAGE, "Invalid request: method must not contain "
		        "a NUL character");
		return RPC_INVALID_REQUEST;
	}
	req->method = json_string_value(v);
	v = json_object_get(req->root, "params");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v) && !json_is_array(v)) {
			err_set(e, ERR_USAGE, "Invalid request: params must be an object");
			return RPC_INVALID_REQUEST;
		}
		req->params = v;
	}
	return 0;
}

void rpc_request_free(struct rpc_request *req)
{
	json_decref(req->root);
	memset(req, 0, sizeof *req);
}

int rpc_code_for_err(int err_code)
{
	switch (err_code) {
	case ERR_USAGE: return RPC_INVALID_PARAMS;
	case ERR_LIMIT: return RPC_TOO_LARGE;
	case ERR_NOMEM: return RPC_INTERNAL_ERROR;
	default: return RPC_DATA_ERROR;
	}
}

int rpc_exit_status(int rpc_code)
{
	return rpc_code == RPC_INVALID_PARAMS ? 2 : 1;
}

static void put_id(struct buf *b, const json_t *id)
{
	if (id)
		jsonout_tree(b, id, 0);
	else
		buf_append(b, "null", 4);
}

void rpc_result_open(struct buf *b, const json_t *id)
{
	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	put_id(b, id);
	buf_puts(b, ",\"result\":");
}

void rpc_result_close(struct buf *b)
{
	buf_putc(b, '}');
}

void rpc_rows_open(struct buf *b, const json_t *id)
{
	buf_puts(b, RPC_ROWS_PREFIX ",\"params\":{\"id\":");
	put_id(b, id);
}

void rpc_error(struct buf *b, const json_t *id, int code, const char *message)
{
	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	put_id(b, id);
	buf_puts(b, ",\"error\":{\"code\":");
	jsonout_int(b, code);
	buf_puts(b, ",\"message\":");
	if (utf8_valid(message, strlen(message)))
		jsonout_cstr(b, message);
	else { /* a frame is UTF-8 whatever the message quotes */
		struct buf fixed;
		buf_init(&fixed, 0);
		buf_append_utf8(&fixed, message, strlen(message));
		if (fixed.failed)
			b->failed = fixed.failed;
		else
			jsonout_str(b, fixed.data ? fixed.data : "", fixed.len);
		buf_free(&fixed);
	}
	buf_puts(b, "}}");
}

void rpc_result_tree(struct buf *b, const json_t *id, const json_t *result)
{
	rpc_result_open(b, id);
	jsonout_tree(b, result, 0);
	rpc_result_close(b);
}

void rpc_hello_params(struct buf *b, const char *client)
{
	buf_puts(b, "{\"protocol\":");
	jsonout_int(b, RPC_PROTOCOL);
	buf_puts(b, ",\"client\":");
	jsonout_cstr(b, client);
	buf_putc(b, '}');
}

void rpc_hello_result_open(struct buf *b, const char *server)
{
	buf_puts(b, "{\"protocol\":");
	jsonout_int(b, RPC_PROTOCOL);
	buf_puts(b, ",\"server\":");
	jsonout_cstr(b, server);
}

void rpc_request_write(struct buf *b, int64_t id, const char *method,
                       const char *params_json)
{
	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	jsonout_int(b, id);
	buf_puts(b, ",\"method\":");
	jsonout_cstr(b, method);
	if (params_json) {
		buf_puts(b, ",\"params\":");
		buf_puts(b, params_json);
	}
	buf_putc(b, '}');
}

/* ---- locating raw member text with yajl ---- */

struct members {
	yajl_handle h;
	const char *text;
	const char *const *keys;
	struct rpc_span *spans;
	size_t nkeys;
	int depth;
	int top_is_object;
	long want;          /* index of the key whose value comes next, or -1 */
	size_t value_from;  /* offset just after that key */
	int capture_depth;  /* depth at which a captured container opened */
	/* the members of one depth-1 object value (sub_of: its key's index,
	 * -1: none) whose values are containers, captured as well */
	long sub_of;
	const char *const *sub_keys;
	struct rpc_span *sub_spans;
	size_t nsub;
	long sub_want;
	int in_sub, sub_capture;
};

static size_t skip_to_value(const struct members *m, size_t from)
{
	const char *t = m->text;
	while (t[from] == ' ' || t[from] == '\t' || t[from] == '\n' ||
	       t[from] == '\r' || t[from] == ':')
		from++;
	return from;
}

static void scalar(struct members *m)
{
	if (m->depth == 1 && m->want >= 0) {
		struct rpc_span *s = &m->spans[m->want];
		size_t start = skip_to_value(m, m->value_from);
		size_t end = yajl_get_bytes_consumed(m->h);
		s->text = m->text + start;
		s->len = end - start;
		s->found = 1;
	}
	if (m->depth == 1)
		m->want = -1;
}

static int m_null(void *ctx) { scalar(ctx); return 1; }
static int m_bool(void *ctx, int v) { (void)v; scalar(ctx); return 1; }
static int m_number(void *ctx, const char *s, size_t n)
{
	(void)s; (void)n;
	scalar(ctx);
	return 1;
}
static int m_string(void *ctx, const unsigned char *s, size_t n)
{
	(void)s; (void)n;
	scalar(ctx);
	return 1;
}

static int m_open(void *ctx, int is_map)
{
	struct members *m = ctx;
	if (m->depth == 0)
		m->top_is_object = is_map;
	if (m->depth == 1 && m->want >= 0) {
		struct rpc_span *s = &m->spans[m->want];
		size_t at = yajl_get_bytes_consumed(m->h) - 1;
		s->text = m->text + at;
		m->capture_depth = 1;
		m->in_sub = is_map && m->want == m->sub_of;
		m->sub_want = -1;
	}
	if (m->depth == 2 && m->in_sub && m->sub_want >= 0) {
		struct rpc_span *s = &m->sub_spans[m->sub_want];
		s->text = m->text + yajl_get_bytes_consumed(m->h) - 1;
		m->sub_capture = 1;
	}
	m->depth++;
	return 1;
}
static int m_start_map(void *ctx) { return m_open(ctx, 1); }
static int m_start_array(void *ctx) { return m_open(ctx, 0); }

static int m_close(void *ctx)
{
	struct members *m = ctx;
	m->depth--;
	if (m->depth == 2 && m->sub_capture) {
		struct rpc_span *s = &m->sub_spans[m->sub_want];
		s->len = (size_t)(m->text + yajl_get_bytes_consumed(m->h) - s->text);
		s->found = 1;
		m->sub_capture = 0;
	}
	if (m->depth == 2)
		m->sub_want = -1;
	if (m->depth == 1)
		m->in_sub = 0;
	if (m->depth == 1 && m->capture_depth == 1 && m->want >= 0) {
		struct rpc_span *s = &m->spans[m->want];
		size_t end = yajl_get_bytes_consumed(m->h);
		s->len = (size_t)(m->text + end - s->text);
		s->found = 1;
		m->capture_depth = 0;
		m->want = -1;
	}
	return 1;
}

static int m_key(void *ctx, const unsigned char *k, size_t n)
{
	struct members *m = ctx;
	if (m->depth == 2 && m->in_sub) {
		m->sub_want = -1;
		for (size_t i = 0; i < m->nsub; i++)
			if (strlen(m->sub_keys[i]) == n &&
			    memcmp(m->sub_keys[i], k, n) == 0)
				m->sub_want = (long)i;
		return 1;
	}
	if (m->depth != 1)
		return 1;
	m->want = -1;
	for (size_t i = 0; i < m->nkeys; i++) {
		if (strlen(m->keys[i]) == n && memcmp(m->keys[i], k, n) == 0) {
			m->want = (long)i;
			m->value_from = yajl_get_bytes_consumed(m->h);
			break;
		}
	}
	return 1;
}

static const yajl_callbacks member_cbs = {
	m_null, m_bool, NULL, NULL, m_number, m_string,
	m_start_map, m_key, m_close, m_start_array, m_close,
};

/* Keys looked up and where their values' spans go (both borrowed). */
struct member_keys {
	const char *const *keys;
	struct rpc_span *spans;
	size_t n;
};

/* rpc_members over top, also capturing the container members sub->keys
 * of the object value of top->keys[sub_of] (sub_of -1: none) into
 * sub->spans (sub NULL when sub_of is -1). */
static int members_sub(const char *json, size_t len,
                       const struct member_keys *top, long sub_of,
                       const struct member_keys *sub, struct err *e)
{
	const char *const *keys = top->keys, *const *sub_keys = NULL;
	struct rpc_span *spans = top->spans, *sub_spans = NULL;
	size_t nkeys = top->n, nsub = 0;
	struct members m;
	yajl_status st;

	if (sub) {
		sub_keys = sub->keys;
		sub_spans = sub->spans;
		nsub = sub->n;
	}
	memset(&m, 0, sizeof m);
	m.text = json;
	m.keys = keys;
	m.spans = spans;
	m.nkeys = nkeys;
	m.want = -1;
	m.sub_of = sub_of;
	m.sub_keys = sub_keys;
	m.sub_spans = sub_spans;
	m.nsub = nsub;
	m.sub_want = -1;
	for (size_t i = 0; i < nkeys; i++)
		memset(&spans[i], 0, sizeof spans[i]);
	for (size_t i = 0; i < nsub; i++)
		memset(&sub_spans[i], 0, sizeof sub_spans[i]);
	m.h = yajl_alloc(&member_cbs, NULL, &m);
	if (!m.h)
		return err_set(e, ERR_NOMEM, "Out of memory");
	st = yajl_parse(m.h, (const unsigned char *)json, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(m.h);
	if (st != yajl_status_ok) {
		unsigned char *msg = yajl_get_error(m.h, 0, NULL, 0);
		err_set(e, ERR_DATA, "invalid JSON: %s", (const char *)msg);
		yajl_free_error(m.h, msg);
		yajl_free(m.h);
		return ERR_DATA;
	}
	yajl_free(m.h);
	if (!m.top_is_object)
		return err_set(e, ERR_DATA, "not a JSON object");
	return 0;
}

int rpc_members(const char *json, size_t len, const char *const *keys,
                struct rpc_span *spans, size_t nkeys, struct err *e)
{
	const struct member_keys top = {keys, spans, nkeys};
	return members_sub(json, len, &top, -1, NULL, e);
}

int rpc_parse_response(const char *text, size_t len, struct rpc_response *r,
                       struct err *e)
{
	static const char *const keys[] = {"jsonrpc", "id", "result", "error",
	                                   "method", "params"};
	static const char *const batch[] = {"columns", "rows"};
	struct rpc_span s[6], b[2];
	const struct member_keys top = {keys, s, 6}, rows = {batch, b, 2};
	json_t *err_obj, *code, *msg;
	json_error_t je;

	memset(r, 0, sizeof *r);
	if (members_sub(text, len, &top, 5, &rows, e))
		return err_prefix(e, "Malformed response from the session");
	r->id = s[1];
	if (s[2].found) {
		r->result = s[2];
		return 0;
	}
	if (!s[1].found && !s[3].found && s[4].found && s[5].found &&
	    s[4].len == sizeof RPC_ROWS + 1 &&
	    !memcmp(s[4].text, "\"" RPC_ROWS "\"", s[4].len)) {
		r->is_rows = 1;
		r->columns = b[0];
		r->rows = b[1];
		return 0;
	}
	if (!s[3].found)
		return err_set(e, ERR_DATA, "Malformed response from the session: neither result nor error");
	err_obj = json_loadb(s[3].text, s[3].len, JSON_ALLOW_NUL, &je);
	code = json_object_get(err_obj, "code");
	msg = json_object_get(err_obj, "message");
	if (!json_is_integer(code) || !json_is_string(msg)) {
		json_decref(err_obj);
		return err_set(e, ERR_DATA, "Malformed response from the session: bad error object");
	}
	r->is_error = 1;
	r->code = (int)json_integer_value(code);
	snprintf(r->message, sizeof r->message, "%s", json_string_value(msg));
	utf8_fix(r->message, sizeof r->message);
	json_decref(err_obj);
	return 0;
}

/* fuzz_rpc: the session's JSON-RPC messages (protocol/rpc) and the query
 * parameters they carry (query_params_from_json + the engine's validation).
 *
 * The input is one frame body.  As a request it is parsed like the daemon
 * does; a "query" runs against the example document (opened once); every
 * reply, success or error, must be valid UTF-8 JSON.  As a response it is
 * picked apart like the client does.  The first list parameter of a query
 * is also decoded again at the per-list limit and one past it (its values
 * repeated): long lists from short inputs. */
#include "fuzzlib.h"
#include "rpc.h"
#include "query/query.h"
#include "base/jsonout.h"

#include <jansson.h>

static struct dataset *ds;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct err e;
	(void)argc, (void)argv;
	if (dataset_open(DSIGHT_TOP "/tests/fixtures/example.trace.json", &ds, &e)) {
		fprintf(stderr, "fuzz_rpc: %s\n", e.msg);
		abort();
	}
	return 0;
}

/* A reply must be UTF-8 JSON (checked with yajl: numbers are exact and may
 * exceed what jansson holds). */
static void check_reply(const struct buf *b)
{
	struct buf pb;
	fuzz_check(!b->failed, "the reply was written");
	fuzz_check(utf8_valid(b->data, b->len), "a reply is valid UTF-8");
	buf_init(&pb, 0);
	fuzz_check(jsonout_pretty(b->data, b->len, &pb) == 0, "a reply is JSON");
	buf_free(&pb);
}

static const struct qlist *list_of(const struct query_params *p,
                                   const struct qparam *qp)
{
	size_t off = qp->type == QP_KEYS ? qp->off : (size_t)qp->list_off;
	return (const struct qlist *)((const char *)p + off);
}

/* The first non-empty array of a list parameter in params, its values
 * repeated to QPARAM_LIST_MAX and to one more: the decoder takes the first
 * (or refuses a value, never the length) and refuses the second for its
 * length, before looking at the values. */
static void amplify_lists(const json_t *params)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)params, key, v) {
		const struct qparam *qp = qparam_by_name(key);
		size_t k = json_array_size(v);
		if (!qp || (qp->type != QP_STRINGS && qp->type != QP_KEYS) || !k)
			continue;
		for (size_t want = QPARAM_LIST_MAX; want <= QPARAM_LIST_MAX + 1; want++) {
			json_t *arr = json_array(), *obj = json_object();
			struct query_params p;
			struct err e;
			char limit[96];
			for (size_t i = 0; i < want; i++)
				json_array_append(arr, json_array_get(v, i % k));
			json_object_set_new(obj, key, arr);
			snprintf(limit, sizeof limit, "%s takes at most %d values", key, QPARAM_LIST_MAX);
			err_clear(&e);
			int rc = query_params_from_json(obj, &p, &e);
			if (want > QPARAM_LIST_MAX)
				fuzz_check(rc == ERR_USAGE && !strcmp(e.msg, limit),
				           "a list over the limit is refused for its length");
			else if (rc)
				fuzz_check(strcmp(e.msg, limit) != 0,
				           "a list at the limit is not refused for its length");
			else
				fuzz_check(list_of(&p, qp)->n == want, "a list at the limit is taken whole");
			query_params_free(&p);
			json_decref(obj);
		}
		return;
	}
}

static void as_request(const char *text, size_t n)
{
	struct rpc_request rq;
	struct err e;
	struct buf b;

	err_clear(&e);
	buf_init(&b, 0);
	int code = rpc_parse_request(text, n, 0, &rq, &e);
	if (!code && !strcmp(rq.method, "query")) {
		struct query_params p;
		query_params_init(&p);
		if (rq.params && json_is_object(rq.params))
			amplify_lists(rq.params);
		if (rq.params && !json_is_object(rq.params))
			code = RPC_INVALID_PARAMS, err_set(&e, ERR_USAGE, "params must be an object");
		else if (rq.params && query_params_from_json(rq.params, &p, &e))
			code = rpc_code_for_err(e.code);
		else {
			/* the client sends parameters with query_params_to_json:
			 * what it writes reads back the same */
			struct buf t1, t2;
			struct query_params q;
			json_error_t je;
			struct err e2;
			buf_init(&t1, 0);
			buf_init(&t2, 0);
			query_params_to_json(&p, &t1);
			json_t *back = json_loadb(t1.data, t1.len, 0, &je);
			fuzz_check(back != NULL, "query_params_to_json writes JSON");
			query_params_init(&q);
			fuzz_check(query_params_from_json(back, &q, &e2) == 0,
			           "query_params_to_json output is accepted");
			query_params_to_json(&q, &t2);
			fuzz_check(t1.len == t2.len && memcmp(t1.data, t2.data, t1.len) == 0,
			           "parameters round-trip through their RPC form");
			query_params_free(&q);
			json_decref(back);
			buf_free(&t1);
			buf_free(&t2);
			struct buf out;
			buf_init(&out, 0);
			if (p.limit > 1000)
				p.limit = 1000; /* keep an iteration short */
			if (query_run(ds, &p, &out, &e))
				code = rpc_code_for_err(e.code);
			else {
				rpc_result_open(&b, rq.id);
				buf_append(&b, out.data, out.len);
				rpc_result_close(&b);
				check_reply(&b);
			}
			buf_free(&out);
		}
		query_params_free(&p);
	}
	if (code) {
		fuzz_check(e.msg[0], "an error has a message");
		buf_reset(&b);
		rpc_error(&b, rq.id, code, e.msg);
		check_reply(&b);
	}
	rpc_request_free(&rq);
	buf_free(&b);
}

static void as_response(const char *text, size_t n)
{
	struct rpc_response r;
	struct err e;

	err_clear(&e);
	if (rpc_parse_response(text, n, &r, &e)) {
		fuzz_check(utf8_valid(e.msg, strlen(e.msg)), "a client error is UTF-8");
		return;
	}
	if (r.is_error)
		fuzz_check(utf8_valid(r.message, strlen(r.message)), "an error message is UTF-8");
	else
		fuzz_check(r.result.found && r.result.text >= text &&
		           r.result.text + r.result.len <= text + n, "the result lies in the frame");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a frame body is NUL-terminated by the reader */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	as_request(text, size);
	as_response(text, size);
	free(text);
	return 0;
}

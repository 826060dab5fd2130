/*
 * remote_query: `dsight query --remote ADDR ...`: sends hello and the query
 * (pipelined, one round trip) to a warm session and prints its `data` byte
 * for byte as the local query would, errors included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "base/jsonout.h"
#include "query/query.h"
#include "rpc_client.h"

/* The read timeout of an sql query: above its largest time limit (30 s). */
#define SQL_READ_TIMEOUT_MS 40000

/* Asks for the answer in batches: params (a JSON object) gets
 * "stream_rows": true.  A session that does not stream (HTTP, an older one)
 * answers in one reply, which the client prints all the same. */
static void ask_stream(struct buf *params)
{
	if (params->failed || params->len < 2 ||
	    params->data[params->len - 1] != '}')
		return;
	params->len--;
	buf_puts(params, params->len > 1 ? ",\"stream_rows\":true}"
	                                 : "\"stream_rows\":true}");
}

/* Prints {"ok": false, "error": msg} on stderr like the local CLI. */
static void print_error(const char *msg)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "{\"ok\": false, \"error\": ");
	jsonout_cstr(&b, msg);
	buf_puts(&b, "}\n");
	fwrite(b.data, 1, b.len, stderr);
	buf_free(&b);
}

/* The answer of a streamed sql query: batches (rows notifications) and
 * the final reply, each batch printed as it comes; a reply without
 * batches (a session that answered at once) is printed whole.  Returns
 * the exit status. */
static int print_stream(struct rpc_client *r, struct rpc_response *resp,
                        enum sqlout_format f, int pretty)
{
	static const char *const dkeys[] = {"data"};
	static const char *const ekeys[] = {"row_count", "truncated"};
	struct sqlout_stream *s = NULL;
	struct rpc_span d[1], t[2];
	struct err e;
	int rc = 0;

	err_clear(&e);
	while (!rc && resp->is_rows) {
		if (!resp->rows.found || resp->rows.text[0] != '[' ||
		    (!s && (!resp->columns.found ||
		            resp->columns.text[0] != '['))) {
			rc = err_set(&e, ERR_DATA, "Malformed batch of rows from "
			             "the session");
			break;
		}
		if (!s && (sqlout_stream_new(f, pretty, stdout, &s, &e) ||
		           sqlout_stream_head(s, resp->columns.text,
		                              resp->columns.len, &e)))
			rc = e.code;
		if (!rc)
			rc = sqlout_stream_rows(s, resp->rows.text + 1,
			                        resp->rows.len - 2, &e);
		if (!rc)
			rc = rpc_client_recv(r, resp, &e);
	}
	if (!rc && resp->is_error) {
		print_error(resp->message);
		sqlout_stream_free(s);
		return rpc_exit_status(resp->code);
	}
	if (!rc && rpc_members(resp->result.text, resp->result.len, dkeys, d,
	                       1, &e))
		rc = e.code;
	if (!rc && !d[0].found)
		rc = err_set(&e, ERR_DATA, "Malformed response from the "
		             "session: no data");
	if (!rc && !s) {
		rc = sqlout_print(d[0].text, d[0].len, f, pretty, &e);
	} else if (!rc) {
		if (rpc_members(d[0].text, d[0].len, ekeys, t, 2, &e) ||
		    !t[0].found || !t[1].found)
			rc = err_set(&e, ERR_DATA, "Malformed end of the rows "
			             "from the session");
		else
			rc = sqlout_stream_end(s, strtoll(t[0].text, NULL, 10),
			                       t[1].text[0] == 't', &e);
	}
	sqlout_stream_free(s);
	if (rc) {
		if (rc != ERR_CLOSED)
			print_error(e.msg);
		return err_exit_status(rc);
	}
	return 0;
}

int cmd_query_remote(const char *addr, const struct query_params *p,
                     enum sqlout_format f, int pretty)
{
	struct rpc_client r;
	struct rpc_response resp;
	struct err e;
	struct buf params, frames;
	int not_live = 0, status = 1;
	static const char *const keys[] = {"generation", "data"};
	struct rpc_span spans[2];

	err_clear(&e);
	if (rpc_client_open(&r, addr, &not_live, &e)) {
		rpc_client_close(&r);
		print_error(e.msg);
		return not_live ? 3 : err_exit_status(e.code);
	}
	/* An sql statement may run up to its 30 s limit: wait longer. */
	if (p->kind && !strcmp(p->kind, "sql") && r.timeout_ms < SQL_READ_TIMEOUT_MS)
		r.timeout_ms = SQL_READ_TIMEOUT_MS;
	buf_init(&params, FRAME_REQUEST_MAX);
	buf_init(&frames, 0);
	query_params_to_json(p, &params);
	if (p->kind && !strcmp(p->kind, "sql"))
		ask_stream(&params);
	rpc_client_frame_hello(&r, &frames, "dsight/" DSIGHT_VERSION);
	rpc_client_frame(&r, &frames, RPC_QUERY, params.data);
	if (params.failed) {
		/* a 1 MiB statement always fits, however it is escaped */
		print_error("The query parameters are larger than the 8 MiB request limit");
		status = 2;
		goto done;
	}
	if (rpc_client_send_raw(&r, &frames, &e) || rpc_client_recv(&r, &resp, &e)) {
		print_error(e.msg);
		goto done;
	}
	if (resp.is_error) {
		print_error(resp.message);
		goto done;
	}
	if (rpc_client_recv(&r, &resp, &e)) {
		print_error(e.msg);
		goto done;
	}
	if (p->kind && !strcmp(p->kind, "sql")) {
		status = print_stream(&r, &resp, f, pretty);
		goto done;
	}
	if (resp.is_error) {
		print_error(resp.message);
		status = rpc_exit_status(resp.code);
		goto done;
	}
	if (rpc_members(resp.result.text, resp.result.len, keys, spans, 2, &e) ||
	    !spans[1].found) {
		print_error("Malformed response from the session: no data");
		goto done;
	}
	status = sqlout_print(spans[1].text, spans[1].len, f, pretty, &e);
	if (status) {
		if (status != ERR_CLOSED)
			print_error(e.msg);
		status = err_exit_status(status);
	}
done:
	buf_free(&params);
	buf_free(&frames);
	rpc_client_close(&r);
	return status;
}

/*
 * remote_query: `dsight query --remote ADDR ...`: sends hello and the query
 * (pipelined, one round trip) to a warm session and prints its `data` byte
 * for byte as the local query would, errors included.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "base/jsonout.h"
#include "query/query.h"
#include "rpc_client.h"

/* The read timeout of an sql query: above its largest time limit (30 s). */
#define SQL_READ_TIMEOUT_MS 40000

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
		print_error(e.msg);
		status = err_exit_status(status);
	}
done:
	buf_free(&params);
	buf_free(&frames);
	rpc_client_close(&r);
	return status;
}

/*
 * remote_query: `dsight query --remote ADDR ...`: sends hello and the query
 * (pipelined, one round trip) to a warm session and prints its `data` byte
 * for byte as the local query would, errors included.
 */
#include <stdio.h>
#include <string.h>

#include "address.h"
#include "cmd.h"
#include "base/jsonout.h"
#include "query/query.h"
#include "remote.h"
#include "rpc.h"

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

/* Prints the not-live message for the resolved address. */
static void print_not_live(const struct address *a)
{
	char msg[512];
	if (a->by_name)
		snprintf(msg, sizeof msg,
		         "No live session at %s. Start one with: dsightd serve REPORT --name %s",
		         a->path, a->name);
	else
		snprintf(msg, sizeof msg,
		         "No live session at %s. Start one with: dsightd serve REPORT --path %s",
		         a->path, a->path);
	print_error(msg);
}

int cmd_query_remote(const char *addr, const struct query_params *p, int pretty)
{
	struct address a;
	struct remote r;
	struct rpc_response resp;
	struct err e;
	struct buf params, frames, out;
	int not_live = 0, status = 1;
	static const char *const keys[] = {"generation", "data"};
	struct rpc_span spans[2];

	err_clear(&e);
	if (address_resolve(addr, 0, &a, &e)) {
		print_error(e.msg);
		return err_exit_status(e.code);
	}
	if (remote_connect(&r, a.path, &not_live, &e)) {
		remote_close(&r);
		if (not_live) {
			print_not_live(&a);
			return 3;
		}
		print_error(e.msg);
		return 1;
	}
	/* An sql statement may run up to its 30 s limit: wait longer. */
	if (p->kind && !strcmp(p->kind, "sql") && r.timeout_ms < SQL_READ_TIMEOUT_MS)
		r.timeout_ms = SQL_READ_TIMEOUT_MS;
	buf_init(&params, FRAME_REQUEST_MAX);
	buf_init(&frames, 0);
	buf_init(&out, 0);
	query_params_to_json(p, &params);
	remote_frame_request(&r, &frames, "hello",
	                     "{\"protocol\":1,\"client\":\"dsight/" DSIGHT_VERSION "\"}");
	remote_frame_request(&r, &frames, "query", params.data);
	if (params.failed) {
		print_error("The query parameters are larger than the 1 MiB request limit");
		status = 2;
		goto done;
	}
	if (remote_send_raw(&r, &frames, &e) || remote_recv(&r, &resp, &e)) {
		print_error(e.msg);
		goto done;
	}
	if (resp.is_error) {
		print_error(resp.message);
		goto done;
	}
	if (remote_recv(&r, &resp, &e)) {
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
	if (pretty) {
		if (jsonout_pretty(spans[1].text, spans[1].len, &out) != 0) {
			print_error("Malformed response from the session: invalid data");
			goto done;
		}
	} else {
		buf_append(&out, spans[1].text, spans[1].len);
	}
	buf_putc(&out, '\n');
	if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		print_error("Cannot write the output");
		goto done;
	}
	status = 0;
done:
	buf_free(&params);
	buf_free(&frames);
	buf_free(&out);
	remote_close(&r);
	return status;
}

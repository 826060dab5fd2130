/*
 * remote_query: `dsight query --remote ADDR ...`: sends hello and the query
 * (pipelined, one round trip) to a warm session and prints its `data` byte
 * for byte as the local query would, errors included.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "base/jsonout.h"
#include "query/query.h"
#include "rpc_client.h"

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

static void put_key(struct buf *b, const char *k)
{
	buf_putc(b, b->len ? ',' : '{');
	jsonout_cstr(b, k);
	buf_putc(b, ':');
}

static void put_str(struct buf *b, const char *k, const char *v)
{
	if (!v)
		return;
	put_key(b, k);
	jsonout_cstr(b, v);
}

/* A real the wire can carry.  JSON has no NaN/inf: a non-finite value is
 * sent as -1, which fails the same validation step with the same message
 * as the local query (start/end: the window rule; min_ttft_ms: finite and
 * nonnegative). */
static void put_real(struct buf *b, const char *k, double v)
{
	put_key(b, k);
	jsonout_real(b, isfinite(v) ? v : -1.0);
}

/* The query parameters by their RPC names; absent ones are omitted. */
static void params_json(const struct query_params *p, struct buf *b)
{
	put_str(b, "kind", p->kind);
	if (p->has_start)
		put_real(b, "start", p->start);
	if (p->has_end)
		put_real(b, "end", p->end);
	put_str(b, "request_id", p->request_id);
	put_str(b, "session", p->session);
	put_str(b, "agent", p->agent);
	put_str(b, "worker", p->worker);
	if (p->has_rank) {
		put_key(b, "rank");
		jsonout_int(b, p->rank);
	}
	if (p->has_profile) {
		put_key(b, "profile");
		jsonout_int(b, p->profile);
	}
	put_str(b, "name", p->name);
	put_str(b, "search", p->search);
	if (p->min_ttft_ms != 0 || signbit(p->min_ttft_ms) || !isfinite(p->min_ttft_ms))
		put_real(b, "min_ttft_ms", p->min_ttft_ms);
	if (p->offset != 0) {
		put_key(b, "offset");
		jsonout_int(b, p->offset);
	}
	if (p->limit != 100) {
		put_key(b, "limit");
		jsonout_int(b, p->limit);
	}
	if (p->points) {
		put_key(b, "points");
		buf_puts(b, "true");
	}
	buf_puts(b, b->len ? "}" : "{}");
}

int cmd_query_remote(const char *addr, const struct query_params *p, int pretty)
{
	struct rpc_client r;
	struct rpc_response resp;
	struct err e;
	struct buf params, frames, out;
	int not_live = 0, status = 1;
	static const char *const keys[] = {"generation", "data"};
	struct rpc_span spans[2];

	err_clear(&e);
	if (rpc_client_open(&r, addr, &not_live, &e)) {
		rpc_client_close(&r);
		print_error(e.msg);
		return not_live ? 3 : err_exit_status(e.code);
	}
	buf_init(&params, FRAME_REQUEST_MAX);
	buf_init(&frames, 0);
	buf_init(&out, 0);
	params_json(p, &params);
	rpc_client_frame_hello(&r, &frames, "dsight/" DSIGHT_VERSION);
	rpc_client_frame(&r, &frames, RPC_QUERY, params.data);
	if (params.failed) {
		print_error("The query parameters are larger than the 1 MiB request limit");
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
	rpc_client_close(&r);
	return status;
}

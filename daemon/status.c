/* status: hello and status result objects (see status.h). */
#include "status.h"
#include "base/jsonout.h"
#include "rpc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t percentile(const uint32_t *sorted, size_t n, double q)
{
	size_t k = (size_t)(q * (double)(n - 1) + 0.5);
	return sorted[k < n ? k : n - 1];
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void put_key(struct buf *o, const char *k, int first)
{
	if (!first)
		buf_putc(o, ',');
	jsonout_cstr(o, k);
	buf_putc(o, ':');
}

void status_write(struct buf *o, const struct status_input *si)
{
	const struct server_info *in = si->info;
	uint64_t now = si->now_ms;

	buf_putc(o, '{');
	put_key(o, "session", 1);
	jsonout_cstr(o, in->session_name);
	put_key(o, "pid", 0);
	jsonout_int(o, getpid());
	put_key(o, "report", 0);
	jsonout_cstr(o, session_report(si->sess));
	put_key(o, "socket_path", 0);
	jsonout_cstr(o, in->socket_path);
	if (in->http_url) {
		put_key(o, "http", 0);
		jsonout_cstr(o, in->http_url);
	}
	put_key(o, "generation", 0);
	jsonout_cstr(o, session_generation(si->sess));
	put_key(o, "started_utc", 0);
	jsonout_cstr(o, in->started_utc);
	put_key(o, "uptime_s", 0);
	jsonout_real(o, (double)(now - in->started_ms) / 1000.0);
	put_key(o, "idle_timeout_s", 0);
	if (in->idle_timeout_ms < 0)
		buf_puts(o, "null");
	else if (in->idle_timeout_ms % 1000 == 0)
		jsonout_int(o, in->idle_timeout_ms / 1000);
	else
		jsonout_real(o, (double)in->idle_timeout_ms / 1000.0);
	put_key(o, "idle_start", 0);
	jsonout_cstr(o, lifetime_start_name(lifetime_mode(si->lt)));
	put_key(o, "idle_s", 0);
	jsonout_real(o, (double)lifetime_idle_ms(si->lt) / 1000.0);
	put_key(o, "orphaned", 0);
	buf_puts(o, lifetime_orphaned(si->lt) ? "true" : "false");
	put_key(o, "queries", 0);
	jsonout_int(o, (int64_t)si->queries);
	put_key(o, "connections", 0);
	jsonout_int(o, si->connections);
	put_key(o, "sql_streams", 0);
	jsonout_int(o, si->sql_streams);
	put_key(o, "sql_engine", 0);
	jsonout_cstr(o, session_sql_engine(si->sess));
	/* statements of this generation the engine's own grouped
	 * aggregates answered (SQLite ran the others) */
	put_key(o, "sql_native", 0);
	jsonout_int(o, (int64_t)session_sql_native(si->sess));
	/* Server-side time of the last TIMES queries, from the decoded frame
	 * to the framed response (queue wait included), in microseconds. */
	put_key(o, "server_time_us", 0);
	{
		size_t n = si->ntimes < STATUS_TIMES ? si->ntimes : STATUS_TIMES;
		uint32_t sorted[STATUS_TIMES];
		memcpy(sorted, si->times, n * sizeof sorted[0]);
		qsort(sorted, n, sizeof sorted[0], cmp_u32);
		buf_putc(o, '{');
		put_key(o, "samples", 1);
		jsonout_int(o, (int64_t)n);
		put_key(o, "last", 0);
		jsonout_int(o, si->last_us);
		put_key(o, "p50", 0);
		jsonout_int(o, n ? percentile(sorted, n, 0.5) : 0);
		put_key(o, "p99", 0);
		jsonout_int(o, n ? percentile(sorted, n, 0.99) : 0);
		buf_putc(o, '}');
	}
	buf_putc(o, '}');
}

void status_hello(struct buf *o, const struct server_info *info,
                  const struct session *sess)
{
	rpc_hello_result_open(o, "dsightd/" DSIGHT_VERSION);
	put_key(o, "session", 0);
	jsonout_cstr(o, info->session_name);
	put_key(o, "pid", 0);
	jsonout_int(o, getpid());
	put_key(o, "report", 0);
	jsonout_cstr(o, session_report(sess));
	put_key(o, "generation", 0);
	jsonout_cstr(o, session_generation(sess));
	buf_putc(o, '}');
}

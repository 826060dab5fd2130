/* query: parameters, validation, dispatch and list shapes (see query.h). */
#include "query/query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "query/query_impl.h"
#include "query/query_sql.h"

const char *const query_kinds[] = {
	"summary", "requests", "request", "lifecycle", "metrics",
	"profiles", "nsys", "cpu", "iterations", "sources",
	"server_spans", "sessions", "workers", "families", "sql", NULL,
};

void query_params_init(struct query_params *p)
{
	memset(p, 0, sizeof *p);
	p->limit = 100;
}

/* ---- RPC / MCP parameters ---- */

static int want_string(const json_t *v, const char *name, const char **out,
                       struct err *e)
{
	if (json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(e, ERR_USAGE, "%s must be a string or null", name);
	*out = json_string_value(v);
	return 0;
}

static int want_number(const json_t *v, const char *name, int *has,
                       double *out, struct err *e)
{
	if (json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return err_set(e, ERR_USAGE, "%s must be a number or null", name);
	*out = json_number_value(v);
	if (has)
		*has = 1;
	return 0;
}

static int want_integer(const json_t *v, const char *name, int *has,
                        int64_t *out, struct err *e)
{
	if (json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return err_set(e, ERR_USAGE, "%s must be an integer or null",
		               name);
	*out = (int64_t)json_integer_value(v);
	if (has)
		*has = 1;
	return 0;
}

int query_params_from_json(const json_t *j, struct query_params *p,
                           struct err *e)
{
	const char *key;
	json_t *v;
	int rc = 0;

	query_params_init(p);
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return err_set(e, ERR_USAGE, "params must be an object");
	json_object_foreach((json_t *)j, key, v) {
		if (!strcmp(key, "kind"))
			rc = want_string(v, key, &p->kind, e);
		else if (!strcmp(key, "start"))
			rc = want_number(v, key, &p->has_start, &p->start, e);
		else if (!strcmp(key, "end"))
			rc = want_number(v, key, &p->has_end, &p->end, e);
		else if (!strcmp(key, "request_id"))
			rc = want_string(v, key, &p->request_id, e);
		else if (!strcmp(key, "session"))
			rc = want_string(v, key, &p->session, e);
		else if (!strcmp(key, "agent"))
			rc = want_string(v, key, &p->agent, e);
		else if (!strcmp(key, "worker"))
			rc = want_string(v, key, &p->worker, e);
		else if (!strcmp(key, "name"))
			rc = want_string(v, key, &p->name, e);
		else if (!strcmp(key, "search"))
			rc = want_string(v, key, &p->search, e);
		else if (!strcmp(key, "sql"))
			rc = want_string(v, key, &p->sql, e);
		else if (!strcmp(key, "timeout"))
			rc = want_number(v, key, &p->has_timeout, &p->timeout, e);
		else if (!strcmp(key, "rank"))
			rc = want_integer(v, key, &p->has_rank, &p->rank, e);
		else if (!strcmp(key, "profile"))
			rc = want_integer(v, key, &p->has_profile, &p->profile, e);
		else if (!strcmp(key, "min_ttft_ms"))
			rc = want_number(v, key, NULL, &p->min_ttft_ms, e);
		else if (!strcmp(key, "offset"))
			rc = want_integer(v, key, NULL, &p->offset, e);
		else if (!strcmp(key, "limit"))
			rc = want_integer(v, key, NULL, &p->limit, e);
		else if (!strcmp(key, "points")) {
			if (json_is_null(v))
				continue;
			if (!json_is_boolean(v))
				rc = err_set(e, ERR_USAGE,
				             "points must be a boolean or null");
			else
				p->points = json_is_true(v);
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- shared helpers ---- */

const json_t *q_array(const json_t *obj, const char *key)
{
	const json_t *a = obj ? json_object_get(obj, key) : NULL;
	return json_is_array(a) ? a : NULL;
}

double q_number(const json_t *obj, const char *key, int *ok)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_number(v)) {
		*ok = 0;
		return 0;
	}
	*ok = 1;
	return json_number_value(v);
}

int q_overlaps(const struct qctx *q, const json_t *obj, const char *kstart,
               const char *kend)
{
	int ok1, ok2;
	double a = q_number(obj, kstart, &ok1), b = q_number(obj, kend, &ok2);
	return ok1 && ok2 && a <= q->end && b >= q->start;
}

int q_wide(const struct qctx *q)
{
	return q->end - q->start >= q->duration / 4;
}

int q_whole_run(const struct qctx *q)
{
	return q->start == 0 && q->end == q->duration;
}

int q_given(const char *s)
{
	return s && *s;
}

int q_str_eq(const json_t *obj, const char *key, const char *s)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) && strlen(s) == json_string_length(v) &&
	       !memcmp(json_string_value(v), s, json_string_length(v));
}

int q_int_eq(const json_t *v, int64_t want)
{
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v) == want;
	if (json_is_real(v))
		return json_real_value(v) == (double)want &&
		       (double)want == json_real_value(v) &&
		       fabs(json_real_value(v)) < 9.2e18 &&
		       (int64_t)json_real_value(v) == want;
	return 0;
}

int64_t q_id(const json_t *obj, size_t k)
{
	const json_t *v = json_object_get(obj, "id");
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)k;
}

int q_select_profiles(struct qctx *q, size_t **idx, size_t *n)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t total = json_array_size(profiles), k;
	const json_t *pr;

	*n = 0;
	*idx = malloc((total ? total : 1) * sizeof **idx);
	if (!*idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(profiles, k, pr) {
		if (!json_is_object(pr))
			continue;
		if (q_given(q->p->worker) && !q_str_eq(pr, "worker", q->p->worker))
			continue;
		if (q->p->has_rank &&
		    !q_int_eq(json_object_get(pr, "rank"), q->p->rank))
			continue;
		if (q->p->has_profile && q_id(pr, k) != q->p->profile)
			continue;
		(*idx)[(*n)++] = k;
	}
	return 0;
}

void q_page(const struct qctx *q, size_t total, size_t *from, size_t *to)
{
	uint64_t off = (uint64_t)q->p->offset, lim = (uint64_t)q->p->limit;
	*from = off < total ? (size_t)off : total;
	*to = total - *from < lim ? total : *from + (size_t)lim;
}

void q_list_head(struct qctx *q, size_t total)
{
	buf_puts(q->out, "{\"total\":");
	jsonout_int(q->out, (int64_t)total);
	buf_puts(q->out, ",\"items\":[");
}

void q_list_tail(struct qctx *q)
{
	buf_puts(q->out, "],\"offset\":");
	jsonout_int(q->out, q->p->offset);
	buf_puts(q->out, ",\"limit\":");
	jsonout_int(q->out, q->p->limit);
	buf_puts(q->out, ",\"range\":[");
	jsonout_real(q->out, q->start);
	buf_putc(q->out, ',');
	jsonout_real(q->out, q->end);
	buf_putc(q->out, ']');
}

size_t q_obj_open_except(struct buf *b, const json_t *obj,
                         const char *const *skip)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	buf_putc(b, '{');
	json_object_foreach((json_t *)obj, key, v) {
		int skipped = 0;
		for (const char *const *s = skip; s && *s; s++)
			if (!strcmp(*s, key))
				skipped = 1;
		if (skipped)
			continue;
		if (n++)
			buf_putc(b, ',');
		jsonout_cstr(b, key);
		buf_putc(b, ':');
		jsonout_tree(b, v, 0);
	}
	return n;
}

/* ---- the sql kind ---- */

/* Validates the sql parameters (the statement, the time limit) and runs the
 * statement on the dataset's cache (query_sql). */
static int query_sql(struct qctx *q)
{
	double t = q->p->has_timeout ? q->p->timeout : QUERY_SQL_TIMEOUT_DEFAULT;
	const char *sql = q->p->sql;
	int rc;

	if (!sql || !*sql)
		return err_set(q->e, ERR_USAGE, "sql needs --sql STATEMENT");
	if (!isfinite(t) || !(t > 0) || t > QUERY_SQL_TIMEOUT_MAX)
		return err_set(q->e, ERR_USAGE, "timeout must be > 0 and <= 30");
	if (!dataset_has_cache(q->ds))
		return err_set(q->e, ERR_USAGE, QUERY_SQL_NO_CACHE);
	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	return query_sql_run(dataset_data_path(q->ds), sql, t, q->out, q->e);
}

/* ---- validation and dispatch ---- */

static const char unknown_kind[] =
	"Unknown query kind '%s'; choose from summary, requests, request, "
	"lifecycle, metrics, profiles, nsys, cpu, iterations, sources, "
	"server_spans, sessions, workers, families, sql";

int query_run(struct dataset *ds, const struct query_params *p,
              struct buf *out, struct err *e)
{
	struct qctx q;
	const char *kind = p->kind ? p->kind : "summary";
	const json_t *meta;
	double duration;
	int ok, rc;

	memset(&q, 0, sizeof q);
	q.ds = ds;
	q.cat = dataset_catalog(ds);
	q.p = p;
	q.out = out;
	q.e = e;
	meta = json_object_get(q.cat, "meta");
	duration = q_number(meta, "duration", &ok);
	if (!ok || !isfinite(duration) || duration <= 0)
		return err_set(e, ERR_DATA,
		               "The dataset's meta.duration is not a finite number "
		               "> 0");
	q.duration = duration;
	q.start = p->has_start ? p->start : 0.0;
	q.end = p->has_end ? p->end : duration;
	if (!isfinite(q.start) || !isfinite(q.end) || !(q.start >= 0) ||
	    !(q.start < q.end) || !(q.end <= duration))
		return err_set(e, ERR_USAGE,
		               "Require 0 <= start < end <= run duration (seconds "
		               "from origin_ns)");
	if (p->offset < 0 || p->limit < 0 || p->limit > 1000)
		return err_set(e, ERR_USAGE,
		               "Require integer offset >= 0 and 0 <= limit <= 1000");
	if (!isfinite(p->min_ttft_ms) || !(p->min_ttft_ms >= 0))
		return err_set(e, ERR_USAGE,
		               "min_ttft_ms must be finite and nonnegative");

	if (!strcmp(kind, "summary"))
		rc = query_summary(&q);
	else if (!strcmp(kind, "requests"))
		rc = query_requests(&q);
	else if (!strcmp(kind, "request"))
		rc = query_request(&q, 0);
	else if (!strcmp(kind, "lifecycle"))
		rc = query_request(&q, 1);
	else if (!strcmp(kind, "metrics"))
		rc = query_metrics(&q);
	else if (!strcmp(kind, "profiles"))
		rc = query_profiles(&q);
	else if (!strcmp(kind, "nsys"))
		rc = query_nsys(&q);
	else if (!strcmp(kind, "cpu"))
		rc = query_cpu(&q);
	else if (!strcmp(kind, "iterations"))
		rc = query_iterations(&q);
	else if (!strcmp(kind, "sources"))
		rc = query_sources(&q);
	else if (!strcmp(kind, "server_spans"))
		rc = query_server_spans(&q);
	else if (!strcmp(kind, "sessions"))
		rc = query_sessions(&q);
	else if (!strcmp(kind, "workers"))
		rc = query_workers(&q);
	else if (!strcmp(kind, "families"))
		rc = query_families(&q);
	else if (!strcmp(kind, "sql"))
		rc = query_sql(&q);
	else
		return err_set(e, ERR_USAGE, unknown_kind, kind);
	if (!rc && out->failed)
		rc = err_set(e, out->failed,
		             out->failed == ERR_LIMIT
		                     ? "The response exceeds the output size limit"
		             : out->failed == ERR_NOMEM
		                     ? "Out of memory while writing the response"
		                     : "The response would hold a non-finite "
		                       "number");
	return rc;
}

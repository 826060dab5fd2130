/* qparams: the parameter table and its decoders/encoder (see qparams.h). */
#include "query/qparams.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/vec.h"

#define OFF(m) offsetof(struct query_params, m)
#define WINDOWED \
	"requests metrics nsys gpu cpu iterations server_spans sessions " \
	"timeline"
#define LISTS                                                              \
	"requests metrics profiles nsys gpu cpu iterations sources " \
	"server_spans sessions workers families timeline"

#define SORTED \
	"requests nsys gpu server_spans iterations sessions timeline"
#define JOINED "nsys gpu metrics iterations cpu timeline"
#define RANGES "nsys timeline"

/* name, flag, metavar, type, default, kinds, help, schema, web, flags,
 * choices, member, has_ flag, list member */
const struct qparam qparam_table[] = {
	{"kind", NULL, "KIND", QP_STRING, "\"summary\"", "",
	 "What to ask.", NULL, NULL, 0, NULL, OFF(kind), -1, -1},
	{"start", "--from", "SECONDS", QP_NUMBER, "0", WINDOWED,
	 "Window start, seconds from meta.origin_ns.", NULL, "from",
	 QP_COMMON, NULL, OFF(start), OFF(has_start), -1},
	{"end", "--to", "SECONDS", QP_NUMBER, NULL, WINDOWED,
	 "Window end, seconds; default the run duration.", NULL, "to",
	 QP_COMMON, NULL, OFF(end), OFF(has_end), -1},
	{"request_id", "--request", "ID", QP_STRING, NULL,
	 "request lifecycle " JOINED,
	 "Request id: required by request and lifecycle; on nsys, gpu, "
	 "metrics, iterations, cpu and timeline it sets the window and the workers "
	 "(see --phase).",
	 NULL, NULL, 0, NULL, OFF(request_id), -1, -1},
	{"phase", "--phase", "PHASE", QP_STRING, "\"whole\"", JOINED,
	 "With --request: the request's prefill [start, first], decode "
	 "[first, end] or whole [start, end].",
	 NULL, NULL, 0, "prefill decode whole", OFF(phase), -1, -1},
	{"session", "--session", "ID", QP_STRINGS, NULL,
	 "requests sessions timeline", "Exact session id; repeat (or a JSON array) for any of several.",
	 NULL, "session", 0, NULL, OFF(session), -1, OFF(session_list)},
	{"agent", "--agent", "NAME", QP_STRINGS, NULL,
	 "requests sessions timeline", "Exact agent; repeat (or a JSON array) for any of several.", NULL,
	 "agent", 0, NULL, OFF(agent), -1, OFF(agent_list)},
	{"worker", "--worker", "ID", QP_STRINGS, NULL,
	 "requests metrics profiles nsys gpu cpu iterations workers timeline",
	 "Exact worker id (e.g. decode-0); one empty value means no filter; "
	 "repeat (or a JSON array) for any of several.",
	 NULL, "worker", 0, NULL, OFF(worker), -1, OFF(worker_list)},
	{"rank", "--rank", "N", QP_INTEGER, NULL,
	 "metrics profiles nsys cpu iterations timeline",
	 "Rank filter; 0 is a real filter.", NULL, "rank", 0, NULL, OFF(rank),
	 OFF(has_rank), -1},
	{"profile", "--profile", "N", QP_INTEGER, NULL,
	 "profiles nsys gpu cpu timeline",
	 "Profile id; 0 is a real filter.", NULL, "profile", 0, NULL,
	 OFF(profile), OFF(has_profile), -1},
	{"device", "--device", "N", QP_INTEGER, NULL, "gpu timeline",
	 "gpu, timeline of gpu: CUDA device id; 0 is a real filter.", NULL, NULL, 0, NULL,
	 OFF(device), OFF(has_device), -1},
	{"stream", "--stream", "N", QP_INTEGER, NULL, "gpu timeline",
	 "gpu, timeline of gpu: CUDA stream id.", NULL, NULL, 0, NULL, OFF(stream),
	 OFF(has_stream), -1},
	{"gpu_kind", "--gpu-kind", "KIND", QP_STRING, NULL, "gpu",
	 "gpu: only kernels, memory copies or memsets.", NULL, NULL, 0,
	 "kernel memcpy memset", OFF(gpu_kind), -1, -1},
	{"name", "--name", "TEXT", QP_STRINGS, NULL,
	 "metrics nsys gpu families timeline",
	 "metrics: exact series name; nsys, gpu: case-insensitive substring of "
	 "the range or kernel name; families: substring; repeat (or a JSON array) for any "
	 "of several.",
	 NULL, "name", 0, NULL, OFF(name), -1, OFF(name_list)},
	{"search", "--search", "TEXT", QP_STRING, NULL,
	 "requests timeline", "requests: case-insensitive substring of any identity.", NULL,
	 "search", 0, NULL, OFF(search), -1, -1},
	{"min_ttft_ms", "--min-ttft-ms", "MS", QP_NUMBER, "0",
	 "requests timeline", "Requests with ttft_ms >= MS (a null TTFT counts as 0).",
	 "\"minimum\":0", "minTTFT", 0, NULL, OFF(min_ttft_ms), -1, -1},
	{"sort", "--sort", "KEYS", QP_KEYS, NULL, SORTED,
	 "Order by these keys in turn (comma-separated or a JSON array; "
	 "\"-\" before a key for descending; nulls last; ties keep the "
	 "default order; timeline: the buckets of its one series).",
	 NULL, NULL, 0, NULL, OFF(sort), -1, -1},
	{"fields", "--fields", "KEYS", QP_KEYS, NULL, LISTS,
	 "Keep only these top-level keys of each item (comma-separated or a "
	 "JSON array).",
	 NULL, NULL, 0, NULL, OFF(fields), -1, -1},
	{"offset", "--offset", "N", QP_INTEGER, "0", LISTS,
	 "First item of the page.", "\"minimum\":0", "offset", QP_COMMON,
	 NULL, OFF(offset), -1, -1},
	{"limit", "--limit", "N", QP_INTEGER, "100", LISTS,
	 "Page size, 0..1000; 0 returns exact totals only.",
	 "\"minimum\":0,\"maximum\":1000", "limit", QP_COMMON, NULL,
	 OFF(limit), -1, -1},
	{"points", "--points", NULL, QP_BOOLEAN, "false", "metrics",
	 "metrics: include up to 1,000 raw points per series.", NULL, "points",
	 0, NULL, OFF(points), -1, -1},
	{"min_duration", "--min-duration", "SECONDS", QP_NUMBER, NULL, RANGES,
	 "NVTX ranges lasting at least SECONDS (end - start).",
	 "\"minimum\":0", NULL, 0, NULL, OFF(min_duration),
	 OFF(has_min_duration), -1},
	{"max_duration", "--max-duration", "SECONDS", QP_NUMBER, NULL, RANGES,
	 "NVTX ranges lasting at most SECONDS (end - start).",
	 "\"minimum\":0", NULL, 0, NULL, OFF(max_duration),
	 OFF(has_max_duration), -1},
	{"max_depth", "--max-depth", "N", QP_INTEGER, NULL, RANGES,
	 "NVTX ranges nested at most N deep in their thread (0 = outermost "
	 "only).",
	 "\"minimum\":0", NULL, 0, NULL, OFF(max_depth), OFF(has_max_depth),
	 -1},
	{"self_time", "--self", NULL, QP_BOOLEAN, "false", "cpu",
	 "cpu: count each sample once for its leaf frame (self time) instead "
	 "of for every frame of its stack.",
	 NULL, NULL, 0, NULL, OFF(self_time), -1, -1},
	{"group_by", "--group-by", "FIELD", QP_STRING, NULL,
	 "nsys gpu requests metrics timeline",
	 "Group the matches: nsys by name, worker, profile or tid; gpu by "
	 "name, device, stream, gpu_kind or nvtx; requests by "
	 "session, agent, worker, status or client_kind; metrics by name, "
	 "worker, group, gpu or host (roll-ups across series); timeline of "
	 "nsys by name, of metrics as metrics.",
	 NULL, NULL, 0,
	 "name worker profile tid device stream gpu_kind nvtx session agent "
	 "status client_kind group gpu host",
	 OFF(group_by), -1, -1},
	{"bucket", "--bucket", "SECONDS", QP_NUMBER, NULL, "timeline",
	 "timeline: bucket width in seconds (> 0; at most 10000 buckets).",
	 "\"exclusiveMinimum\":0", NULL, 0, NULL, OFF(bucket),
	 OFF(has_bucket), -1},
	{"of", "--of", "SOURCE", QP_STRING, "\"requests\"", "timeline",
	 "timeline: what to bucket: requests, nsys, cpu, metrics or gpu.",
	 NULL, NULL, 0, "requests nsys cpu metrics gpu", OFF(of), -1, -1},
	{"sql", "--sql", "STATEMENT", QP_STRING, NULL, "sql",
	 "sql: one read-only SELECT on the report's SQLite cache and its views "
	 "(nvtx, cpu_samples, cpu_frames, cpu_self, metric_points, series, "
	 "metric_series, requests, request_workers, lifecycle_stages, "
	 "server_spans, profiles, workers, sessions, iterations, sources, gpu, "
	 "gpu_launches), at "
	 "most 1 MiB; at most max_rows "
	 "rows (then truncated: true); an answer sent in one piece (MCP, "
	 "Python) also stops at 16 MiB, the CLI's streams.",
	 NULL, NULL, 0, NULL, OFF(sql), -1, -1},
	{"timeout", "--timeout", "SECONDS", QP_NUMBER, "10", "sql",
	 "sql: time limit in seconds, > 0 and <= 30.",
	 "\"exclusiveMinimum\":0,\"maximum\":30", NULL, 0, NULL, OFF(timeout),
	 OFF(has_timeout), -1},
	{"max_rows", "--max-rows", "N", QP_INTEGER, "10000", "sql",
	 "sql: the most rows returned, 0..1000000 (then truncated: true).",
	 "\"minimum\":0,\"maximum\":1000000", NULL, 0, NULL, OFF(max_rows),
	 -1, -1},
};
const size_t qparam_count = sizeof qparam_table / sizeof qparam_table[0];

const struct qparam *qparam_by_name(const char *name)
{
	for (size_t k = 0; k < qparam_count; k++)
		if (!strcmp(qparam_table[k].name, name))
			return &qparam_table[k];
	return NULL;
}

const struct qparam *qparam_by_flag(const char *flag, size_t len)
{
	for (size_t k = 0; k < qparam_count; k++) {
		const char *f = qparam_table[k].flag;
		if (f && strlen(f) == len && !strncmp(f, flag, len))
			return &qparam_table[k];
	}
	return NULL;
}

int qparam_used_by(const struct qparam *qp, const char *kind)
{
	size_t n = strlen(kind);
	for (const char *s = qp->kinds; *s;) {
		size_t w = strcspn(s, " ");
		if (w == n && !strncmp(s, kind, n))
			return 1;
		s += w;
		s += strspn(s, " ");
	}
	return 0;
}

/* ---- member access ---- */

#define MEMBER(p, qp, type) ((type *)((char *)(p) + (qp)->off))
#define LIST(p, qp) ((struct qlist *)((char *)(p) + (qp)->list_off))

static void mark(struct query_params *p, const struct qparam *qp)
{
	if (qp->has_off >= 0)
		*(int *)((char *)p + qp->has_off) = 1;
}

static int has(const struct query_params *p, const struct qparam *qp)
{
	return qp->has_off >= 0 && *(const int *)((const char *)p + qp->has_off);
}

/* Memory the decoders allocated for p: a growing array of blocks. */
struct owned_list;
struct owned {
	void **blocks;
	size_t n, cap;
	struct owned_list *lists;
	size_t nlists, lcap;
};

/* Takes block (malloc'd) into p's ownership; NULL (block freed) when out
 * of memory. */
static void *own(struct query_params *p, void *block)
{
	struct owned *o = p->owned;
	if (!block)
		return NULL;
	if (!o && !(o = p->owned = calloc(1, sizeof *o)))
		goto fail;
	if (vec_reserve(&o->blocks, &o->cap, o->n + 1, sizeof *o->blocks))
		goto fail;
	o->blocks[o->n++] = block;
	return block;
fail:
	free(block);
	return NULL;
}

/* The growing arrays behind the lists of p: each list's array is owned
 * here (freed by query_params_free) so that it can grow in place. */
struct owned_list {
	struct qlist *l;
	const char **v;
	size_t cap;
};

/* Room for one more value in *l; -1 when out of memory.  The array grows
 * geometrically (base/vec), so n appends cost O(n). */
static int list_grow(struct query_params *p, struct qlist *l,
                     const char ***arr)
{
	struct owned *o = p->owned;
	struct owned_list *ol = NULL;
	if (!o && !(o = p->owned = calloc(1, sizeof *o)))
		return -1;
	for (size_t k = 0; k < o->nlists; k++)
		if (o->lists[k].l == l)
			ol = &o->lists[k];
	if (!ol) {
		if (vec_reserve(&o->lists, &o->lcap, o->nlists + 1,
		                sizeof *o->lists))
			return -1;
		ol = &o->lists[o->nlists++];
		ol->l = l;
		ol->v = NULL;
		ol->cap = 0;
	}
	if (vec_reserve(&ol->v, &ol->cap, l->n + 1, sizeof *ol->v))
		return -1;
	*arr = ol->v;
	return 0;
}

/* Appends value to *l (at most QPARAM_LIST_MAX values: the caller checks;
 * this only refuses beyond it).  v stays borrowed. */
static int list_add(struct query_params *p, struct qlist *l, const char *v)
{
	const char **a;
	if (l->n >= QPARAM_LIST_MAX || list_grow(p, l, &a))
		return -1;
	a[l->n] = v;
	l->v = a;
	l->n++;
	return 0;
}

static int too_many(struct err *e, const char *what)
{
	return err_set(e, ERR_USAGE,
	               "%s takes at most %d values", what, QPARAM_LIST_MAX);
}

/* Appends the comma-separated keys of text to *l; ERR_USAGE past the
 * per-list limit (what names the parameter), ERR_NOMEM. */
static int keys_add(struct query_params *p, struct qlist *l, const char *text,
                    const char *what, struct err *e)
{
	size_t n = 1;
	for (const char *c = text; (c = strchr(c, ',')); c++)
		n++;
	if (n > QPARAM_LIST_MAX - l->n)
		return too_many(e, what);
	char *copy = own(p, strdup(text));
	if (!copy)
		return err_set(e, ERR_NOMEM, "out of memory");
	for (char *s = copy;;) {
		char *c = strchr(s, ',');
		if (c)
			*c = 0;
		if (list_add(p, l, s))
			return err_set(e, ERR_NOMEM, "out of memory");
		if (!c)
			return 0;
		s = c + 1;
	}
}

void query_params_init(struct query_params *p)
{
	memset(p, 0, sizeof *p);
	for (size_t k = 0; k < qparam_count; k++) {
		const struct qparam *qp = &qparam_table[k];
		if (!qp->def || qp->has_off >= 0)
			continue;
		if (qp->type == QP_NUMBER)
			*MEMBER(p, qp, double) = strtod(qp->def, NULL);
		else if (qp->type == QP_INTEGER)
			*MEMBER(p, qp, int64_t) = strtoll(qp->def, NULL, 10);
		else if (qp->type == QP_BOOLEAN)
			*MEMBER(p, qp, int) = !strcmp(qp->def, "true");
	}
}

void query_params_free(struct query_params *p)
{
	struct owned *o = p->owned;
	if (o) {
		for (size_t k = 0; k < o->n; k++)
			free(o->blocks[k]);
		free(o->blocks);
		for (size_t k = 0; k < o->nlists; k++)
			free(o->lists[k].v);
		free(o->lists);
		free(o);
	}
	query_params_init(p);
}

/* ---- CLI ---- */

static int parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;
	if (!*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	if (!*s)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || (errno == ERANGE && isinf(*out)))
		return -1;
	return 0;
}

int query_params_set_cli(struct query_params *p, const struct qparam *qp,
                         const char *text, struct err *e)
{
	switch (qp->type) {
	case QP_STRING:
		*MEMBER(p, qp, const char *) = text;
		break;
	case QP_NUMBER:
		if (parse_num(text, MEMBER(p, qp, double)))
			return err_set(e, ERR_USAGE, "%s must be a number",
			               qp->flag);
		break;
	case QP_INTEGER:
		if (parse_int(text, MEMBER(p, qp, int64_t)))
			return err_set(e, ERR_USAGE, "%s must be an integer",
			               qp->flag);
		break;
	case QP_BOOLEAN:
		*MEMBER(p, qp, int) = 1;
		break;
	case QP_STRINGS: {
		const char **one = MEMBER(p, qp, const char *);
		struct qlist *l = LIST(p, qp);
		if (!*one && !l->n) {
			*one = text;
			break;
		}
		if (l->n + (*one != NULL) >= QPARAM_LIST_MAX)
			return too_many(e, qp->flag);
		if ((*one && list_add(p, l, *one)) || list_add(p, l, text))
			return err_set(e, ERR_NOMEM, "out of memory");
		*one = NULL;
		/* the first value (moved) and this one: the rest were checked */
		if (!*l->v[0] || !*text)
			return err_set(e, ERR_USAGE,
			               "%s values must not be empty", qp->name);
		break;
	}
	case QP_KEYS:
		if (keys_add(p, MEMBER(p, qp, struct qlist), text, qp->flag, e))
			return e->code;
		break;
	}
	mark(p, qp);
	return 0;
}

/* ---- RPC / MCP ---- */

static const char *const type_words[] = {
	"a string", "a number", "an integer", "a boolean",
	"a string, a list of strings", "a string, a list of strings"};

/* A JSON array of strings into *l (QP_STRINGS: no empty string). */
static int decode_list(const json_t *v, const struct qparam *qp,
                       struct query_params *p, struct qlist *l,
                       struct err *e)
{
	size_t k;
	const json_t *x;

	if (!json_array_size(v))
		return err_set(e, ERR_USAGE, "%s must not be an empty list",
		               qp->name);
	if (json_array_size(v) > QPARAM_LIST_MAX)
		return too_many(e, qp->name);
	json_array_foreach(v, k, x) {
		if (!json_is_string(x))
			return err_set(e, ERR_USAGE, "%s must be %s or null",
			               qp->name, type_words[qp->type]);
		if (qp->type == QP_STRINGS && !json_string_length(x))
			return err_set(e, ERR_USAGE,
			               "%s values must not be empty", qp->name);
	}
	l->n = 0;
	json_array_foreach(v, k, x) {
		if (list_add(p, l, json_string_value(x)))
			return err_set(e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

static int nonfinite_text(const char *s, double *out)
{
	if (!strcmp(s, "nan"))
		*out = NAN;
	else if (!strcmp(s, "inf"))
		*out = INFINITY;
	else if (!strcmp(s, "-inf"))
		*out = -INFINITY;
	else
		return 0;
	return 1;
}

static int decode_one(const json_t *v, const struct qparam *qp,
                      struct query_params *p, struct err *e)
{
	int ok = 0;

	if (json_is_null(v))
		return 0;
	switch (qp->type) {
	case QP_STRING:
		if ((ok = json_is_string(v)))
			*MEMBER(p, qp, const char *) = json_string_value(v);
		break;
	case QP_NUMBER:
		if ((ok = json_is_number(v)))
			*MEMBER(p, qp, double) = json_number_value(v);
		else if (json_is_string(v))
			ok = nonfinite_text(json_string_value(v),
			                    MEMBER(p, qp, double));
		break;
	case QP_INTEGER:
		if ((ok = json_is_integer(v)))
			*MEMBER(p, qp, int64_t) =
				(int64_t)json_integer_value(v);
		break;
	case QP_BOOLEAN:
		if ((ok = json_is_boolean(v)))
			*MEMBER(p, qp, int) = json_is_true(v);
		break;
	case QP_STRINGS:
		if ((ok = json_is_string(v)))
			*MEMBER(p, qp, const char *) = json_string_value(v);
		else if (json_is_array(v))
			return decode_list(v, qp, p, LIST(p, qp), e);
		break;
	case QP_KEYS:
		if (json_is_array(v))
			return decode_list(v, qp, p, MEMBER(p, qp, struct qlist),
			                   e);
		if ((ok = json_is_string(v)) &&
		    keys_add(p, MEMBER(p, qp, struct qlist),
		             json_string_value(v), qp->name, e))
			return e->code;
		break;
	}
	if (!ok)
		return err_set(e, ERR_USAGE, "%s must be %s or null", qp->name,
		               type_words[qp->type]);
	mark(p, qp);
	return 0;
}

/* Whether v is a string with a NUL character, or an array holding one
 * (JSON readers here allow \u0000 so that this can name the parameter). */
static int holds_nul(const json_t *v)
{
	size_t k;
	const json_t *x;

	if (json_is_string(v))
		return strlen(json_string_value(v)) != json_string_length(v);
	json_array_foreach(v, k, x)
		if (json_is_string(x) &&
		    strlen(json_string_value(x)) != json_string_length(x))
			return 1;
	return 0;
}

int query_params_from_json(const json_t *j, struct query_params *p,
                           struct err *e)
{
	const char *key;
	json_t *v;

	query_params_init(p);
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return err_set(e, ERR_USAGE, "params must be an object");
	json_object_foreach((json_t *)j, key, v) {
		const struct qparam *qp = qparam_by_name(key);
		int rc;
		if (qp && holds_nul(v))
			return err_set(e, ERR_USAGE, "%s must not contain a NUL "
			               "character", qp->name);
		if (qp && (rc = decode_one(v, qp, p, e)) != 0)
			return rc;
	}
	return 0;
}

static void put_key(struct buf *b, size_t *n, const char *k)
{
	buf_putc(b, (*n)++ ? ',' : '{');
	jsonout_cstr(b, k);
	buf_putc(b, ':');
}

void query_params_to_json(const struct query_params *p, struct buf *out)
{
	struct query_params d;
	size_t n = 0;

	query_params_init(&d);
	for (size_t k = 0; k < qparam_count; k++) {
		const struct qparam *qp = &qparam_table[k];
		if (qp->has_off >= 0 && !has(p, qp))
			continue;
		switch (qp->type) {
		case QP_STRING: {
			const char *s = *MEMBER(p, qp, const char *);
			if (!s)
				continue;
			put_key(out, &n, qp->name);
			jsonout_cstr(out, s);
			break;
		}
		case QP_NUMBER: {
			double v = *MEMBER(p, qp, double);
			double dv = *MEMBER(&d, qp, double);
			if (qp->has_off < 0 && !memcmp(&v, &dv, sizeof v))
				continue;
			put_key(out, &n, qp->name);
			if (isfinite(v))
				jsonout_real(out, v);
			else
				jsonout_cstr(out, isnan(v)  ? "nan"
				                  : v > 0   ? "inf"
				                            : "-inf");
			break;
		}
		case QP_INTEGER: {
			int64_t v = *MEMBER(p, qp, int64_t);
			if (qp->has_off < 0 && v == *MEMBER(&d, qp, int64_t))
				continue;
			put_key(out, &n, qp->name);
			jsonout_int(out, v);
			break;
		}
		case QP_BOOLEAN:
			if (*MEMBER(p, qp, int) == *MEMBER(&d, qp, int))
				continue;
			put_key(out, &n, qp->name);
			buf_puts(out, *MEMBER(p, qp, int) ? "true" : "false");
			break;
		case QP_STRINGS:
		case QP_KEYS: {
			const struct qlist *l = qp->type == QP_KEYS
			                                ? MEMBER(p, qp, struct qlist)
			                                : LIST(p, qp);
			if (qp->type == QP_STRINGS &&
			    *MEMBER(p, qp, const char *)) {
				put_key(out, &n, qp->name);
				jsonout_cstr(out, *MEMBER(p, qp, const char *));
			}
			if (!l->n)
				continue;
			put_key(out, &n, qp->name);
			for (size_t i = 0; i < l->n; i++) {
				buf_putc(out, i ? ',' : '[');
				jsonout_cstr(out, l->v[i]);
			}
			buf_putc(out, ']');
			break;
		}
		}
	}
	buf_puts(out, n ? "}" : "{}");
}

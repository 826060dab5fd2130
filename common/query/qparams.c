/* qparams: the parameter table and its decoders/encoder (see qparams.h). */
#include "query/qparams.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

#define OFF(m) offsetof(struct query_params, m)
#define WINDOWED "requests metrics nsys cpu iterations server_spans sessions"
#define LISTS                                                              \
	"requests metrics profiles nsys cpu iterations sources server_spans " \
	"sessions workers families"

const struct qparam qparam_table[] = {
	{"kind", NULL, "KIND", QP_STRING, "\"summary\"", "",
	 "What to ask.", NULL, NULL, 0, OFF(kind), -1},
	{"start", "--from", "SECONDS", QP_NUMBER, "0", WINDOWED,
	 "Window start, seconds from meta.origin_ns.", NULL, "from",
	 QP_COMMON, OFF(start), OFF(has_start)},
	{"end", "--to", "SECONDS", QP_NUMBER, NULL, WINDOWED,
	 "Window end, seconds; default the run duration.", NULL, "to",
	 QP_COMMON, OFF(end), OFF(has_end)},
	{"request_id", "--request", "ID", QP_STRING, NULL, "request lifecycle",
	 "Request id; required by request and lifecycle.", NULL, NULL, 0,
	 OFF(request_id), -1},
	{"session", "--session", "ID", QP_STRING, NULL, "requests sessions",
	 "Exact session id.", NULL, "session", 0, OFF(session), -1},
	{"agent", "--agent", "NAME", QP_STRING, NULL, "requests sessions",
	 "Exact agent.", NULL, "agent", 0, OFF(agent), -1},
	{"worker", "--worker", "ID", QP_STRING, NULL,
	 "requests metrics profiles nsys cpu iterations workers",
	 "Exact worker id (e.g. decode-0); empty means no filter.", NULL,
	 "worker", 0, OFF(worker), -1},
	{"rank", "--rank", "N", QP_INTEGER, NULL,
	 "metrics profiles nsys cpu iterations",
	 "Rank filter; 0 is a real filter.", NULL, "rank", 0, OFF(rank),
	 OFF(has_rank)},
	{"profile", "--profile", "N", QP_INTEGER, NULL, "profiles nsys cpu",
	 "Profile id; 0 is a real filter.", NULL, "profile", 0, OFF(profile),
	 OFF(has_profile)},
	{"name", "--name", "TEXT", QP_STRING, NULL, "metrics nsys families",
	 "metrics: exact series name; nsys: case-insensitive substring of the "
	 "range name; families: substring.",
	 NULL, "name", 0, OFF(name), -1},
	{"search", "--search", "TEXT", QP_STRING, NULL, "requests",
	 "requests: case-insensitive substring of any identity.", NULL,
	 "search", 0, OFF(search), -1},
	{"min_ttft_ms", "--min-ttft-ms", "MS", QP_NUMBER, "0", "requests",
	 "Requests with ttft_ms >= MS (a null TTFT counts as 0).",
	 "\"minimum\":0", "minTTFT", 0, OFF(min_ttft_ms), -1},
	{"offset", "--offset", "N", QP_INTEGER, "0", LISTS,
	 "First item of the page.", "\"minimum\":0", "offset", QP_COMMON,
	 OFF(offset), -1},
	{"limit", "--limit", "N", QP_INTEGER, "100", LISTS,
	 "Page size, 0..1000; 0 returns exact totals only.",
	 "\"minimum\":0,\"maximum\":1000", "limit", QP_COMMON, OFF(limit), -1},
	{"points", "--points", NULL, QP_BOOLEAN, "false", "metrics",
	 "metrics: include up to 1,000 raw points per series.", NULL, "points",
	 0, OFF(points), -1},
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

static void mark(struct query_params *p, const struct qparam *qp)
{
	if (qp->has_off >= 0)
		*(int *)((char *)p + qp->has_off) = 1;
}

static int has(const struct query_params *p, const struct qparam *qp)
{
	return qp->has_off >= 0 && *(const int *)((const char *)p + qp->has_off);
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
	free(p->owned);
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
	}
	mark(p, qp);
	return 0;
}

/* ---- RPC / MCP ---- */

static const char *const type_words[] = {"a string", "a number",
                                         "an integer", "a boolean"};

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
	}
	if (!ok)
		return err_set(e, ERR_USAGE, "%s must be %s or null", qp->name,
		               type_words[qp->type]);
	mark(p, qp);
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
		}
	}
	buf_puts(out, n ? "}" : "{}");
}

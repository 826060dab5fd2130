/* nsys_name: the export file-name convention (see nsys_name.h). */
#include "ingest/nsys_name.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a non-empty run of digits at *p into *v (fits int64); advances. */
static int take_int(const char **p, const char *end, int64_t *v)
{
	const char *s = *p;
	int64_t x = 0;
	if (s >= end || *s < '0' || *s > '9')
		return 0;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > (INT64_MAX - (*s - '0')) / 10)
			return 0;
		x = x * 10 + (*s - '0');
		s++;
	}
	*v = x;
	*p = s;
	return 1;
}

static int take_lit(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return 0;
	*p += n;
	return 1;
}

/* Matches "<role>_w<index>[_e<engine>][_profile_rank<r>|_profile_gpu<l>]"
 * exactly over [s, end). */
static int match_worker(const char *s, const char *end, struct nsys_name *o)
{
	static const char *const roles[] = {"prefill", "decode", "agg"};
	for (size_t r = 0; r < 3; r++) {
		const char *p = s;
		int64_t idx, v;
		if (!take_lit(&p, end, roles[r]) || !take_lit(&p, end, "_w") ||
		    !take_int(&p, end, &idx))
			continue;
		o->has_engine = o->has_rank = 0;
		o->gpus[0] = '\0';
		if (take_lit(&p, end, "_e")) {
			if (!take_int(&p, end, &v))
				continue;
			o->has_engine = 1;
			o->engine = v;
		}
		if (take_lit(&p, end, "_profile_rank")) {
			if (!take_int(&p, end, &v))
				continue;
			o->has_rank = 1;
			o->rank = v;
		} else if (take_lit(&p, end, "_profile_gpu")) {
			size_t n = (size_t)(end - p);
			if (n == 0 || n >= sizeof o->gpus ||
			    strspn(p, "0123456789,-") < n)
				continue;
			memcpy(o->gpus, p, n);
			o->gpus[n] = '\0';
			p = end;
		}
		if (p != end)
			continue;
		snprintf(o->role, sizeof o->role, "%s", roles[r]);
		snprintf(o->worker, sizeof o->worker, "%s-%lld", roles[r],
		         (long long)idx);
		o->index = idx;
		return 1;
	}
	return 0;
}

static int match_frontend(const char *s, const char *end, struct nsys_name *o)
{
	const char *p = s;
	int64_t n;
	if (!take_lit(&p, end, "frontend_") || !take_int(&p, end, &n) ||
	    p != end)
		return 0;
	snprintf(o->role, sizeof o->role, "frontend");
	snprintf(o->worker, sizeof o->worker, "frontend");
	o->index = -1;
	o->has_engine = o->has_rank = 0;
	o->gpus[0] = '\0';
	return 1;
}

void nsys_name_parse(const char *file, struct nsys_name *o)
{
	static const char ext[] = ".sqlite";
	size_t len = strlen(file), el = sizeof ext - 1;

	memset(o, 0, sizeof *o);
	snprintf(o->worker, sizeof o->worker, "unmapped");
	o->index = -1;
	if (len <= el || strcmp(file + len - el, ext) != 0)
		return;
	const char *end = file + len - el;
	/* The host is everything before the first '_' that starts a match. */
	for (const char *u = file + 1; u < end; u++) {
		if (*u != '_' || (size_t)(u - file) >= sizeof o->host)
			continue;
		if (match_worker(u + 1, end, o) || match_frontend(u + 1, end, o)) {
			memcpy(o->host, file, (size_t)(u - file));
			o->host[u - file] = '\0';
			o->mapped = 1;
			return;
		}
	}
	memset(o, 0, sizeof *o);
	snprintf(o->worker, sizeof o->worker, "unmapped");
	o->index = -1;
}

/* catsearch: search-text shards (see catsearch.h). */
#include "report/catsearch.h"
#include "base/jsonout.h"
#include "base/vec.h"
#include "report/shard.h"

#include <stdlib.h>
#include <string.h>

/* Bytes never in UTF-8: the group buffer's and the shard text's marks
 * until the separators replace them. */
#define FIELD_END 0xFF   /* between fields, as in dsight_requests.search */
#define REQUEST_END 0xFE /* group buffer: after each request */
#define REQUEST 0xFE     /* shard text: before each request's own fields */
#define GROUP 0xFD       /* shard text: between groups */

void catsearch_init(struct catsearch *s, struct shardq *q)
{
	memset(s, 0, sizeof *s);
	s->q = q;
	buf_init(&s->group, 0);
	buf_init(&s->shard, 0);
	buf_init(&s->pack, 0);
	s->descs = json_array();
}

void catsearch_free(struct catsearch *s)
{
	buf_free(&s->group);
	buf_free(&s->shard);
	buf_free(&s->pack);
	json_decref(s->descs);
	s->descs = NULL;
}

static int nomem(struct err *e)
{
	return err_set(e, ERR_NOMEM, "Out of memory writing search-text shards");
}

int catsearch_add(struct catsearch *s, const void *blob, size_t n,
                  struct err *e)
{
	if (n)
		buf_append(&s->group, blob, n);
	buf_putc(&s->group, (char)REQUEST_END);
	return s->group.failed ? nomem(e) : 0;
}

struct str {
	const char *p;
	size_t n;
};

static int str_in(const struct str *v, size_t n, const char *p, size_t len)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].n == len && !memcmp(v[k].p, p, len))
			return 1;
	return 0;
}

/* Does request [p, end) hold the field x? */
static int has_field(const char *p, const char *end, struct str x)
{
	while (p <= end) {
		const char *f = memchr(p, FIELD_END, (size_t)(end - p));
		size_t n = (size_t)((f ? f : end) - p);
		if (n == x.n && !memcmp(p, x.p, n))
			return 1;
		if (!f)
			break;
		p = f + 1;
	}
	return 0;
}

/* The group's requests as: the fields every one of them holds (each
 * once), then per request REQUEST and its other fields (each once). */
int catsearch_group_end(struct catsearch *s, struct err *e)
{
	const char *g = s->group.data, *end = g + s->group.len;
	struct str *shared = NULL, *own = NULL;
	size_t ns = 0, cap = 0, ocap = 0;
	int rc = 0;

	if (!s->group.len)
		return 0;
	if (s->shard.len)
		buf_putc(&s->shard, (char)GROUP);
	/* shared: the first request's fields found in every request */
	for (int pass = 0; pass < 2; pass++) {
		const char *r = g;
		while (r < end) {
			const char *re = memchr(r, REQUEST_END, (size_t)(end - r));
			size_t no = 0;
			if (pass)
				buf_putc(&s->shard, (char)REQUEST);
			for (const char *p = r; p <= re;) {
				const char *f = memchr(p, FIELD_END, (size_t)(re - p));
				struct str x = {p, (size_t)((f ? f : re) - p)};
				p = f ? f + 1 : re + 1;
				if (re == r)
					break; /* a request without fields */
				if (!pass && r == g) {
					if (!str_in(shared, ns, x.p, x.n)) {
						if (vec_reserve(&shared, &cap, ns + 1, sizeof *shared)) {
							rc = nomem(e);
							goto out;
						}
						shared[ns++] = x;
					}
				} else if (pass && !str_in(shared, ns, x.p, x.n)) {
					if (str_in(own, no, x.p, x.n))
						continue;
					if (vec_reserve(&own, &ocap, no + 1, sizeof *own)) {
						rc = nomem(e);
						goto out;
					}
					if (no)
						buf_putc(&s->shard, (char)FIELD_END);
					buf_append(&s->shard, x.p, x.n);
					own[no++] = x;
				}
			}
			if (!pass && r != g) {
				for (size_t k = 0; k < ns;) {
					if (has_field(r, re, shared[k]))
						k++;
					else
						shared[k] = shared[--ns];
				}
			}
			r = re + 1;
		}
		if (!pass)
			for (size_t k = 0; k < ns; k++) {
				if (k)
					buf_putc(&s->shard, (char)FIELD_END);
				buf_append(&s->shard, shared[k].p, shared[k].n);
			}
	}
	if (s->shard.failed)
		rc = nomem(e);
out:
	free(shared);
	free(own);
	buf_reset(&s->group);
	return rc;
}

/* Writes the pack as a shard (no-op when empty). */
static int flush(struct catsearch *s, struct err *e)
{
	static const double none[4];
	json_t *j;
	int rc;

	if (!s->rows)
		return 0;
	buf_putc(&s->pack, ']');
	if (s->pack.failed)
		return nomem(e);
	if ((rc = shardq_add(s->q, s->pack.data, s->pack.len, s->rows, none, &j,
	                     e)))
		return rc;
	json_object_del(j, "bounds");
	json_object_set_new(j, "catalog_shards",
	                    json_pack("[II]", (json_int_t)s->first, (json_int_t)s->last));
	if (!j || json_array_append_new(s->descs, j))
		return nomem(e);
	buf_reset(&s->pack);
	s->rows = 0;
	return 0;
}

/* Picks three separators absent from text (for FIELD_END, REQUEST,
 * GROUP), in order of their cost in JSON; 0 when fewer are absent. */
static int pick_separators(const struct buf *text, char sep[3])
{
	static const char first[] = "\x7f|~^`{}\n\t\r\f\b";
	unsigned char seen[256] = {0};
	int n = 0;

	for (size_t k = 0; k < text->len; k++)
		seen[(unsigned char)text->data[k]] = 1;
	for (size_t k = 0; k < sizeof first - 1 && n < 3; k++)
		if (!seen[(unsigned char)first[k]])
			sep[n++] = first[k];
	for (int c = 1; c < 0x20 && n < 3; c++)
		if (!seen[c] && !strchr(first, c))
			sep[n++] = (char)c;
	return n == 3;
}

int catsearch_shard_end(struct catsearch *s, uint64_t shard, struct err *e)
{
	struct buf *t = &s->shard;
	struct buf row;
	char sep[3];
	int rc = 0;

	if (!t->len)
		return 0;
	buf_init(&row, 0);
	buf_printf(&row, "[%llu,", (unsigned long long)shard);
	/* the fields hold none of the marks: pick among the other bytes */
	if (pick_separators(t, sep)) {
		for (size_t k = 0; k < t->len; k++) {
			unsigned char c = (unsigned char)t->data[k];
			if (c == FIELD_END)
				t->data[k] = sep[0];
			else if (c == REQUEST)
				t->data[k] = sep[1];
			else if (c == GROUP)
				t->data[k] = sep[2];
		}
		jsonout_str(&row, t->data, t->len);
		for (int k = 0; k < 3; k++) {
			buf_putc(&row, ',');
			jsonout_str(&row, &sep[k], 1);
		}
	} else {
		buf_puts(&row, "null,\"\",\"\",\"\"");
	}
	buf_putc(&row, ']');
	buf_reset(t);
	if (row.failed) {
		rc = nomem(e);
		goto out;
	}
	/* cut before a row that would take the pack over the budget */
	if (s->rows && s->pack.len + 1 + row.len + 1 > CATSEARCH_MAX_DECODED &&
	    (rc = flush(s, e)))
		goto out;
	if (!s->rows)
		s->first = shard;
	s->last = shard;
	buf_putc(&s->pack, s->rows ? ',' : '[');
	buf_append(&s->pack, row.data, row.len);
	s->rows++;
	if (s->pack.failed)
		rc = nomem(e);
out:
	buf_free(&row);
	return rc;
}

int catsearch_finish(struct catsearch *s, json_t **descs, struct err *e)
{
	int rc;

	*descs = NULL;
	if ((rc = flush(s, e)))
		return rc;
	*descs = json_incref(s->descs);
	return 0;
}

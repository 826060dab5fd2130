/* catsearch: search-text shards (see catsearch.h). */
#include "report/catsearch.h"
#include "base/jsonout.h"
#include "report/shard.h"

#include <string.h>

#define FIELD_END 0xFF  /* between fields, as in dsight_requests.search */
#define REQUEST_END 0xFE /* after each request (never in UTF-8 either) */

void catsearch_init(struct catsearch *s, const char *dir)
{
	memset(s, 0, sizeof *s);
	s->dir = dir;
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

int catsearch_group_end(struct catsearch *s, struct err *e)
{
	buf_append(&s->shard, s->group.data, s->group.len);
	buf_reset(&s->group);
	return s->shard.failed ? nomem(e) : 0;
}

/* Writes the pack as a shard (no-op when empty). */
static int flush(struct catsearch *s, struct err *e)
{
	struct shard_desc d;
	json_t *j;
	int rc;

	if (!s->rows)
		return 0;
	buf_putc(&s->pack, ']');
	if (s->pack.failed)
		return nomem(e);
	memset(&d, 0, sizeof d);
	if ((rc = shard_write_text(s->dir, s->pack.data, s->pack.len, &d, e)))
		return rc;
	d.count = s->rows;
	j = shard_desc_json(&d);
	json_object_del(j, "bounds");
	json_object_set_new(j, "catalog_shards",
	                    json_pack("[II]", (json_int_t)s->first, (json_int_t)s->last));
	if (!j || json_array_append_new(s->descs, j))
		return nomem(e);
	buf_reset(&s->pack);
	s->rows = 0;
	return 0;
}

/* Picks two separators absent from text (us, rs), in order of their cost
 * in JSON; 0 when fewer than two are absent. */
static int pick_separators(const struct buf *text, char *us, char *rs)
{
	static const char first[] = "\x7f|~^`{}\n\t\r\f\b";
	unsigned char seen[256] = {0};
	char got[2];
	int n = 0;

	for (size_t k = 0; k < text->len; k++)
		seen[(unsigned char)text->data[k]] = 1;
	for (size_t k = 0; k < sizeof first - 1 && n < 2; k++)
		if (!seen[(unsigned char)first[k]])
			got[n++] = first[k];
	for (int c = 1; c < 0x20 && n < 2; c++)
		if (!seen[c] && !strchr(first, c))
			got[n++] = (char)c;
	if (n < 2)
		return 0;
	*us = got[0];
	*rs = got[1];
	return 1;
}

int catsearch_shard_end(struct catsearch *s, uint64_t shard, struct err *e)
{
	struct buf *t = &s->shard;
	struct buf row;
	char us, rs;
	int rc = 0;

	if (!t->len)
		return 0;
	buf_init(&row, 0);
	buf_printf(&row, "[%llu,", (unsigned long long)shard);
	/* the fields hold neither 0xFF nor 0xFE: pick among the rest */
	if (pick_separators(t, &us, &rs)) {
		for (size_t k = 0; k < t->len; k++) {
			unsigned char c = (unsigned char)t->data[k];
			if (c == FIELD_END)
				t->data[k] = us;
			else if (c == REQUEST_END)
				t->data[k] = rs;
		}
		/* the last request's end is no separator */
		jsonout_str(&row, t->data, t->len - 1);
		buf_putc(&row, ',');
		jsonout_str(&row, &us, 1);
		buf_putc(&row, ',');
		jsonout_str(&row, &rs, 1);
	} else {
		buf_puts(&row, "null,\"\",\"\"");
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

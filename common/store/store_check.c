/* store_check: the extension tables' invariants (see store_check.h). */
#include "store/store_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_ext.h"
#include "store/store_typed.h"

/* A dsight_meta count: 0 and *out when text is a non-negative decimal
 * integer (at most 18 digits), else -1. */
static int count_text(const char *text, int64_t *out)
{
	int64_t v = 0;
	size_t n = text ? strlen(text) : 0;

	if (n == 0 || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -1;
		v = v * 10 + (text[i] - '0');
	}
	*out = v;
	return 0;
}

/* The integer of "SELECT <expr>" (one row, one column) into *out: 0, or
 * ERR_DATA with SQLite's message. */
static int one_int(sqlite3 *db, const char *path, const char *table,
                   const char *sql, int64_t *out, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		err_set(e, ERR_DATA, "%s: cannot read %s: %s", path, table,
		        sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return e->code;
	}
	*out = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1
	       : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* ERR_DATA when an indexed column of k that the builder keeps regular
 * (not in irregular) holds a value of the wrong type: text or a blob in a
 * number column, a number in a text column.  One index probe each (in an
 * index, numbers sort before text, text before blobs). */
static int check_types(sqlite3 *db, const char *path, int k,
                       const char *irregular, struct err *e)
{
	const char *table = store_ext_table(k);
	size_t n;
	const struct ext_col *cols = store_ext_columns(k, &n);
	char sql[512], pat[64];
	int64_t bad;

	for (size_t i = 0; i < n; i++) {
		snprintf(pat, sizeof pat, ",%s,", cols[i].name);
		if (!cols[i].indexed || cols[i].kind == EXT_PRESENT ||
		    strstr(irregular, pat))
			continue;
		if (cols[i].kind == EXT_TEXT)
			snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s "
			         "WHERE \"%s\" < '') + EXISTS (SELECT 1 FROM %s "
			         "WHERE \"%s\" >= x'')", table, cols[i].name,
			         table, cols[i].name);
		else
			snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s "
			         "WHERE \"%s\" >= '')", table, cols[i].name);
		if (one_int(db, path, table, sql, &bad, e))
			return e->code;
		if (bad)
			return err_set(e, ERR_DATA, "%s: %s: the column %s holds a "
			               "value of the wrong type; the report was "
			               "altered: rebuild it", path, table,
			               cols[i].name);
	}
	return 0;
}

/* Checks k's table against its dsight_meta counts (store_check_meta). */
static int check_collection(sqlite3 *db, const char *path, int k,
                            const char *irregular, int64_t count,
                            int64_t timed, int64_t negative_ttft,
                            struct err *e)
{
	const char *table = store_ext_table(k);
	const char *key = evidence_collection_key(k);
	char sql[512];
	int64_t lo, hi, untimed, neg;

	if (!strstr(irregular, ",*,") && check_types(db, path, k, irregular, e))
		return e->code;

	/* ordinals are the rowid: unique, so 0 .. count - 1 at both ends
	 * bounds the rows by count (two probes; counting them would scan an
	 * index: 90 ms at 200k requests) */
	snprintf(sql, sizeof sql, "SELECT (SELECT min(ordinal) FROM %s)", table);
	if (one_int(db, path, table, sql, &lo, e))
		return e->code;
	snprintf(sql, sizeof sql, "SELECT (SELECT max(ordinal) FROM %s)", table);
	if (one_int(db, path, table, sql, &hi, e))
		return e->code;
	if (count > 0 ? lo != 0 || hi != count - 1 : lo != -1)
		return err_set(e, ERR_DATA, "%s: %s: the ordinals run from %lld to"
		               " %lld, but dsight_meta count.%s says %lld rows; the "
		               "report was altered: rebuild it", path, table,
		               (long long)lo, (long long)hi, key, (long long)count);
	snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM %s WHERE start "
	         "IS NULL) + (SELECT count(*) FROM %s WHERE \"end\" IS NULL AND "
	         "start IS NOT NULL)", table, table);
	if (one_int(db, path, table, sql, &untimed, e))
		return e->code;
	if (timed != count - untimed)
		return err_set(e, ERR_DATA, "%s: %s holds %lld rows with a start "
		               "and an end but dsight_meta timed.%s says %lld; the "
		               "report was altered: rebuild it", path, table,
		               (long long)(count - untimed), key, (long long)timed);
	if (negative_ttft < 0)
		return 0;
	snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM %s WHERE "
	         "ttft_ms < 0)", table);
	if (one_int(db, path, table, sql, &neg, e))
		return e->code;
	if (neg != negative_ttft)
		return err_set(e, ERR_DATA, "%s: %s holds %lld rows with a "
		               "negative ttft_ms but dsight_meta negative_ttft says"
		               " %lld; the report was altered: rebuild it", path,
		               table, (long long)neg, (long long)negative_ttft);
	return 0;
}

/* Reads a count of dsight_meta (key k, text v) into *out; a value that
 * is not a non-negative integer names k in bad (the first one only). */
static void meta_count(const char *k, const char *v, int64_t *out,
                       char *bad, size_t badsz)
{
	if (count_text(v, out) && !*bad)
		snprintf(bad, badsz, "%s", k);
}

int store_check_read_meta(sqlite3 *db, const char *generation,
                          struct store_meta *c, int *match, char *bad,
                          size_t badsz)
{
	sqlite3_stmt *st = NULL;
	int ext = 0, gen = 0, rc;

	*match = 0;
	*bad = 0;
	c->negative_ttft = -1;
	for (int i = 0; i < EVIDENCE_NCOLLECTIONS; i++)
		c->count[i] = c->timed[i] = -1;
	if (sqlite3_prepare_v2(db, "SELECT key, value FROM dsight_meta", -1,
	                       &st, NULL) != SQLITE_OK)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (!k)
			continue;
		if (!strcmp(k, "extension"))
			ext = v && !strcmp(v, STORE_EXT_VERSION);
		else if (!strcmp(k, "generation"))
			gen = v && !strcmp(v, generation);
		else if (!strcmp(k, "negative_ttft"))
			meta_count(k, v, &c->negative_ttft, bad, badsz);
		for (int i = 0; i < EVIDENCE_NCOLLECTIONS; i++) {
			const char *ck = evidence_collection_key(i);
			if (!strncmp(k, "count.", 6) && !strcmp(k + 6, ck))
				meta_count(k, v, &c->count[i], bad, badsz);
			else if (!strncmp(k, "timed.", 6) && !strcmp(k + 6, ck))
				meta_count(k, v, &c->timed[i], bad, badsz);
			else if (!strncmp(k, "irregular.", 10) &&
			         !strcmp(k + 10, ck) && v) {
				free(c->irregular[i]);
				c->irregular[i] = malloc(strlen(v) + 3);
				if (c->irregular[i])
					sprintf(c->irregular[i], ",%s,", v);
			}
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	for (int i = 0; i < EVIDENCE_NCOLLECTIONS; i++) {
		const char *ck = evidence_collection_key(i);
		if (!c->irregular[i])
			return 0;
		if (!*bad && c->count[i] < 0)
			snprintf(bad, badsz, "count.%s", ck);
		if (!*bad && c->timed[i] < 0)
			snprintf(bad, badsz, "timed.%s", ck);
	}
	if (!*bad && c->negative_ttft < 0)
		snprintf(bad, badsz, "negative_ttft");
	*match = ext && gen;
	return 0;
}

/* A typed table against its v1 table at one end (dir "ASC" or "DESC"):
 * the same key, time and payload values, the same types. */
struct typed_pair {
	const char *v1, *typed, *k1, *cmp;
};

static int check_typed_end(sqlite3 *db, const char *path,
                           const struct typed_pair *p, const char *dir,
                           struct err *e)
{
	char sql[1024];
	sqlite3_stmt *st = NULL;
	int rc, same;

	snprintf(sql, sizeof sql,
	         "SELECT a.%s, a.ordinal, b.%s IS a.%s AND b.ordinal IS a.ordinal"
	         " AND b.time IS a.time AND %s FROM (SELECT 1)"
	         " LEFT JOIN (SELECT * FROM %s ORDER BY %s %s, ordinal %s LIMIT 1)"
	         " AS a LEFT JOIN (SELECT * FROM %s ORDER BY %s %s, ordinal %s"
	         " LIMIT 1) AS b",
	         p->k1, p->k1, p->k1, p->cmp, p->v1, p->k1, dir, dir, p->typed,
	         p->k1, dir, dir);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		err_set(e, ERR_DATA, "%s: cannot read %s: %s", path, p->typed,
		        sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return e->code;
	}
	same = sqlite3_column_int(st, 2);
	if (!same)
		err_set(e, ERR_DATA, "%s: %s disagrees with %s (%s %lld, ordinal "
		        "%lld); the report was altered: rebuild it", path, p->typed,
		        p->v1, p->k1, (long long)sqlite3_column_int64(st, 0),
		        (long long)sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	return same ? 0 : e->code;
}

int store_check_typed(sqlite3 *db, const char *path, struct err *e)
{
	static const struct typed_pair pairs[] = {
		{"points", STORE_TYPED_POINTS, "series",
		 "b.value IS json_extract(a.payload, '$[1]') AND typeof(b.value) ="
		 " typeof(json_extract(a.payload, '$[1]'))"},
		{"samples", STORE_TYPED_SAMPLES, "profile",
		 "b.tid IS json_extract(a.payload, '$[1]') AND b.stack IS"
		 " json_extract(a.payload, '$[2]') AND b.source_row IS"
		 " json_extract(a.payload, '$[3]')"},
	};
	sqlite3_stmt *st = NULL;
	int has = 0;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type"
	                       " = 'table' AND name IN ('" STORE_TYPED_POINTS "', '"
	                       STORE_TYPED_SAMPLES "')", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		has = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	for (size_t k = 0; has && k < sizeof pairs / sizeof pairs[0]; k++)
		if (check_typed_end(db, path, &pairs[k], "ASC", e) ||
		    check_typed_end(db, path, &pairs[k], "DESC", e))
			return e->code;
	return 0;
}

int store_check_meta(sqlite3 *db, const char *path,
                     const struct store_meta *m, const char *bad,
                     struct err *e)
{
	if (*bad)
		return err_set(e, ERR_DATA, "%s: dsight_meta %s is missing or is "
		               "not a count (a non-negative integer); the report "
		               "was altered: rebuild it", path, bad);
	for (int k = 0; k < EVIDENCE_NCOLLECTIONS; k++)
		if (check_collection(db, path, k, m->irregular[k], m->count[k],
		                     m->timed[k], k == EVIDENCE_REQUESTS ?
		                     m->negative_ttft : -1, e))
			return e->code;
	return store_check_typed(db, path, e);
}

void store_check_meta_free(struct store_meta *m)
{
	for (int k = 0; k < EVIDENCE_NCOLLECTIONS; k++) {
		free(m->irregular[k]);
		m->irregular[k] = NULL;
	}
}

int store_check_element(const char *path, enum evidence_collection k,
                        const char *irregular, enum store_shape shape,
                        const json_t *el, struct err *e)
{
	const char *irr = irregular ? irregular : ",*,";

	if (shape == STORE_TIMES || strstr(irr, ",*,"))
		return 0;
	if (!json_is_object(el))
		return err_set(e, ERR_DATA, "%s: %s: a row's json is not an "
		               "object; the report was altered: rebuild it", path,
		               store_ext_table(k));
	if (k == EVIDENCE_REQUESTS && !strstr(irr, ",id,") &&
	    !json_is_string(json_object_get(el, "id")))
		return err_set(e, ERR_DATA, "%s: dsight_requests: a row's json has"
		               " no string id; the report was altered: rebuild it",
		               path);
	return 0;
}

/* cattop: the top lists and the request density of a sharded catalog's
 * index (see cattop.h). */
#include "report/cattop.h"
#include "store/store_ext.h"
#include "report/shard.h"

#include <stdint.h>
#include <stdio.h>

static const char *const fields[] = {"id", "session", "agent", "status",
	"start", "end", "ttft_ms", "duration", "input_tokens", "output_tokens",
	"shard"};
#define NFIELDS (int)(sizeof fields / sizeof fields[0])

void cattop_fields(json_t *out)
{
	for (int k = 0; k < NFIELDS; k++)
		json_array_append_new(out, json_string(fields[k]));
}

/* The error of db's last failed call. */
static int db_error(sqlite3 *db, struct err *e)
{
	return err_set(e, ERR_DATA, "Cannot read the request index: %s",
	               sqlite3_errmsg(db));
}

static int is_num(sqlite3_stmt *st, int col)
{
	int t = sqlite3_column_type(st, col);
	return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

static json_t *value_json(sqlite3_stmt *st, int col)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, col));
	case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, col));
	case SQLITE_TEXT: {
		json_t *j = json_stringn((const char *)sqlite3_column_text(st, col),
		                         (size_t)sqlite3_column_bytes(st, col));
		return j ? j : json_null();
	}
	default: return json_null();
	}
}

int cattop_list(sqlite3 *db, const char *key, const char *shard_map, int top,
                json_t *out, struct err *e)
{
	char sql[512];
	sqlite3_stmt *st = NULL;
	int rc = 0, rs;

	snprintf(sql, sizeof sql,
	         "SELECT r.id, r.session, r.agent, r.status, r.start, r.end, "
	         "r.ttft_ms, r.duration, r.input_tokens, r.output_tokens, m.shard "
	         "FROM " STORE_EXT_REQUESTS " r LEFT JOIN %s m "
	         "ON m.id = r.id AND m.kind = 0 "
	         "ORDER BY r.%s IS NULL, r.%s DESC, r.ordinal LIMIT %d",
	         shard_map, key, key, top);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(db, e);
	while ((rs = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *row = json_array();
		for (int k = 0; k < NFIELDS; k++)
			json_array_append_new(row, value_json(st, k));
		if (json_array_append_new(out, row)) {
			rc = err_set(e, ERR_NOMEM, "Out of memory for the top lists");
			break;
		}
	}
	if (!rc && rs != SQLITE_DONE)
		rc = db_error(db, e);
	sqlite3_finalize(st);
	return rc;
}

int cattop_density(sqlite3 *db, double duration, json_t *out, struct err *e)
{
	uint64_t bins[SHARD_DENSITY_BINS] = {0};
	sqlite3_stmt *st = NULL;
	int rs;

	if (sqlite3_prepare_v2(db, "SELECT start, end FROM " STORE_EXT_REQUESTS, -1, &st,
	                       NULL) != SQLITE_OK)
		return db_error(db, e);
	while ((rs = sqlite3_step(st)) == SQLITE_ROW)
		if (is_num(st, 0) && is_num(st, 1))
			shard_density_add(bins, duration, sqlite3_column_double(st, 0),
			                  sqlite3_column_double(st, 1));
	sqlite3_finalize(st);
	if (rs != SQLITE_DONE)
		return db_error(db, e);
	for (int i = 0; i < SHARD_DENSITY_BINS; i++)
		json_array_append_new(out, json_integer((json_int_t)bins[i]));
	return 0;
}

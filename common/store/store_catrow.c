/* store_catrow: the v1 catalog row (see store_catrow.h). */
#include "store/store_catrow.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "store/store_ext.h"

static int fail(sqlite3 *db, const char *path, struct err *e)
{
	int sys = sqlite3_system_errno(db);

	if (sys)
		return err_set(e, ERR_DATA, "cannot write %s (catalog): %s (%s)",
		               path, sqlite3_errmsg(db), strerror(sys));
	return err_set(e, ERR_DATA, "cannot write %s (catalog): %s", path,
	               sqlite3_errmsg(db));
}

static int append_out(void *ctx, const char *data, size_t n)
{
	struct buf *b = ctx;
	buf_append(b, data, n);
	return b->failed;
}

int store_catrow_write(sqlite3 *db, const struct store_catrow_in *in,
                       struct store_catrow_out *stats, struct err *e)
{
	struct buf b;
	sqlite3_stmt *st = NULL;
	unsigned stored = 0;
	int rc;

	memset(stats, 0, sizeof *stats);
	for (int c = 0; c < EVIDENCE_NCOLLECTIONS; c++)
		if (in->elements[c])
			stored |= 1u << c;
	buf_init(&b, 0);
	jsonout_tree(&b, in->catalog, 0);
	if (b.failed) {
		buf_free(&b);
		return err_set(e, b.failed == ERR_DATA ? ERR_DATA : ERR_NOMEM,
		               "cannot encode the catalog as JSON");
	}
	if (stored) {
		int whole = b.len + in->element_bytes <= STORE_EXT_ROW_MAX;
		stats->whole_catalog_bytes = b.len + in->element_bytes;
		buf_reset(&b);
		if (store_ext_emit_catalog(db, in->catalog, whole ? stored : 0,
		                           whole ? NULL : "\"dsight_collections\":\"external\"",
		                           append_out, &b, e)) {
			buf_free(&b);
			return e->code;
		}
		stats->external = !whole;
	}
	if (b.len > 0x7fffffff) {
		buf_free(&b);
		return err_set(e, ERR_LIMIT, "the catalog JSON is larger than 2 GiB");
	}
	stats->catalog_bytes = b.len;
	if (sqlite3_prepare_v2(db, "INSERT INTO catalog VALUES (?1,?2)", -1,
	                       &st, NULL) != SQLITE_OK) {
		buf_free(&b);
		return fail(db, in->path, e);
	}
	sqlite3_bind_text(st, 1, b.data ? b.data : "", (int)b.len, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, in->generation, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	buf_free(&b);
	return rc == SQLITE_DONE ? 0 : fail(db, in->path, e);
}

int store_generation_new(char out[STORE_GENERATION_LEN + 1], struct err *e)
{
	unsigned char raw[STORE_GENERATION_LEN / 2];
	size_t got = 0;

	while (got < sizeof raw) {
		ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(e, ERR_DATA,
			               "cannot read random bytes for the generation id");
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	out[STORE_GENERATION_LEN] = '\0';
	return 0;
}

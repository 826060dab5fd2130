/* nsys_export: open and describe one Nsight export (see nsys_export.h). */
#include "ingest/nsys_export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/hash.h"
#include "base/utf8.h"

int nsys_export_sqlerr(const struct nsys_export *x, int rc, const char *what,
                       struct err *e)
{
	const char *msg = x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc);
	int prim = rc & 0xff;
	if (prim == SQLITE_NOTADB)
		return err_set(e, ERR_DATA, "%s: not an SQLite database (%s)",
		               x->display, msg);
	if (prim == SQLITE_CORRUPT)
		return err_set(e, ERR_DATA,
		               "%s: corrupt SQLite export while %s (%s)",
		               x->display, what, msg);
	if (prim == SQLITE_NOMEM)
		return err_set(e, ERR_NOMEM, "%s: out of memory while %s",
		               x->display, what);
	return err_set(e, ERR_DATA, "%s: cannot read the export while %s (%s)",
	               x->display, what, msg);
}

/* "file:<absolute path, percent-encoded>?mode=ro" (caller frees). */
static char *ro_uri(const char *abs)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "file:");
	for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
		if (*p == '?' || *p == '#' || *p == '%' || *p < 0x20 ||
		    *p == 0x7f)
			buf_printf(&b, "%%%02X", *p);
		else
			buf_putc(&b, (char)*p);
	}
	buf_puts(&b, "?mode=ro");
	if (b.failed) {
		buf_free(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* Reads the first 16 bytes: 0 when they are the SQLite magic. */
static int check_magic(const char *path, const char *display, struct err *e)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(e, ERR_DATA, "%s: cannot open the export",
		               display);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return err_sys(e, ERR_DATA, "%s: cannot stat the export",
		               display);
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return err_set(e, ERR_DATA, "%s: is a directory", display);
	}
	ssize_t n = read(fd, head, sizeof head);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return err_sys(e, ERR_DATA, "%s: cannot read the export",
		               display);
	}
	if (n == (ssize_t)sizeof head && memcmp(head, magic, 16) == 0)
		return 0;
	size_t dl = strlen(display);
	if (dl > 9 && strcmp(display + dl - 9, ".nsys-rep") == 0)
		return err_set(e, ERR_DATA,
		               "%s: is an Nsight report, not an SQLite export; "
		               "convert it with `nsys export --type sqlite "
		               "--output FILE.sqlite %s`",
		               display, display);
	return err_set(e, ERR_DATA, "%s: not an SQLite database%s", display,
	               n == 0 ? " (empty file)" : "");
}

/* 1 when table t exists (tables or views), 0 when not, <0 sqlite rc. */
static int table_exists(sqlite3 *db, const char *t, int *rc)
{
	sqlite3_stmt *st;
	*rc = sqlite3_prepare_v2(db,
		"SELECT 1 FROM sqlite_master WHERE type IN ('table','view') "
		"AND name = ?1", -1, &st, NULL);
	if (*rc != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	int found = r == SQLITE_ROW;
	if (r != SQLITE_ROW && r != SQLITE_DONE) {
		*rc = r;
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return found;
}

/* 1 when table t has column c (case-insensitive, as SQLite). */
static int has_column(sqlite3 *db, const char *t, const char *c, int *rc)
{
	sqlite3_stmt *st;
	*rc = sqlite3_prepare_v2(db,
		"SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 "
		"COLLATE NOCASE", -1, &st, NULL);
	if (*rc != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	int found = r == SQLITE_ROW;
	if (r != SQLITE_ROW && r != SQLITE_DONE) {
		*rc = r;
		found = -1;
	}
	sqlite3_finalize(st);
	return found;
}

/* A formatted sentence (caller frees), NULL when out of memory. */
static char *dup_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *dup_printf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

json_t *nsys_export_text(const char *s, size_t n, uint64_t *invalid)
{
	if (utf8_valid(s, n))
		return json_stringn(s, n);
	struct buf b;
	buf_init(&b, 0);
	size_t bad = buf_append_utf8(&b, s, n);
	if (invalid)
		*invalid += bad;
	json_t *j = b.failed ? NULL : json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	return j;
}

json_t *nsys_export_string(const char *s, size_t n)
{
	return nsys_export_text(s, n, NULL);
}

int nsys_export_seconds(const struct nsys_export *x, int64_t origin_ns,
                        int64_t rel, double *out, struct err *e)
{
	int64_t abs, d;
	if (__builtin_add_overflow(x->epoch_ns, rel, &abs) ||
	    __builtin_sub_overflow(abs, origin_ns, &d))
		return err_set(e, ERR_DATA, "%s: timestamp %" PRId64
		               " is out of the 64-bit nanosecond range",
		               x->display, rel);
	*out = (double)d / 1e9;
	return 0;
}

int nsys_export_has_table(const struct nsys_export *x, const char *t, int *rc)
{
	return table_exists(x->db, t, rc);
}

int nsys_export_has_column(const struct nsys_export *x, const char *t,
                           const char *c, int *rc)
{
	return has_column(x->db, t, c, rc);
}

void nsys_export_close(struct nsys_export *x)
{
	if (x->db)
		sqlite3_close(x->db);
	free(x->display);
	free(x->hostname);
	memset(x, 0, sizeof *x);
}

/* Missing required tables/columns as a sentence fragment, or "" (owned). */
static int check_required(struct nsys_export *x, struct buf *missing,
                          struct err *e)
{
	static const char *const tables[] = {
		"NVTX_EVENTS", "StringIds", "TARGET_INFO_SESSION_START_TIME",
		"ANALYSIS_DETAILS"};
	static const char *const cols[][3] = {
		{"NVTX_EVENTS", "start", "end"},
		{"StringIds", "id", "value"},
		{"TARGET_INFO_SESSION_START_TIME", "utcEpochNs", NULL},
		{"ANALYSIS_DETAILS", "startTime", "stopTime"}};
	int rc, nt = 0, nc = 0;
	struct buf tb, cb;
	buf_init(&tb, 0);
	buf_init(&cb, 0);
	for (size_t i = 0; i < 4; i++) {
		int ok = table_exists(x->db, tables[i], &rc);
		if (ok < 0) {
			buf_free(&tb);
			buf_free(&cb);
			return nsys_export_sqlerr(x, rc, "listing its tables", e);
		}
		if (!ok) {
			buf_printf(&tb, "%s%s", nt++ ? ", " : "", tables[i]);
			continue;
		}
		for (size_t k = 1; k < 3 && cols[i][k]; k++) {
			ok = has_column(x->db, cols[i][0], cols[i][k], &rc);
			if (ok < 0) {
				buf_free(&tb);
				buf_free(&cb);
				return nsys_export_sqlerr(x, rc,
				                          "listing its columns", e);
			}
			if (!ok)
				buf_printf(&cb, "%s%s.%s", nc++ ? ", " : "",
				           cols[i][0], cols[i][k]);
		}
	}
	if (nt)
		buf_printf(missing, "missing required table%s %s", nt > 1 ? "s" : "",
		           tb.data);
	if (nc)
		buf_printf(missing, "%smissing required column%s %s",
		           nt ? "; " : "", nc > 1 ? "s" : "", cb.data);
	buf_free(&tb);
	buf_free(&cb);
	return 0;
}

/* Steps a one-row query; 1 = row, 0 = none, <0 error (rc set). */
static int one_row(sqlite3_stmt *st, int *rc)
{
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		return 1;
	if (r == SQLITE_DONE)
		return 0;
	*rc = r;
	return -1;
}

static int read_clock(struct nsys_export *x, char **skip, struct err *e)
{
	sqlite3_stmt *st;
	int rc, r;
	x->has_sysclock = has_column(x->db, "TARGET_INFO_SESSION_START_TIME",
	                             "systemClockNs", &rc);
	if (x->has_sysclock < 0)
		return nsys_export_sqlerr(x, rc, "listing its columns", e);
	rc = sqlite3_prepare_v2(x->db, x->has_sysclock ?
		"SELECT utcEpochNs, systemClockNs FROM "
		"TARGET_INFO_SESSION_START_TIME ORDER BY rowid LIMIT 1" :
		"SELECT utcEpochNs, 0 FROM TARGET_INFO_SESSION_START_TIME "
		"ORDER BY rowid LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return nsys_export_sqlerr(x, rc, "reading the session start", e);
	r = one_row(st, &rc);
	if (r < 0) {
		sqlite3_finalize(st);
		return nsys_export_sqlerr(x, rc, "reading the session start", e);
	}
	if (r == 0 || sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
	    (sqlite3_column_type(st, 1) != SQLITE_INTEGER &&
	     sqlite3_column_type(st, 1) != SQLITE_NULL)) {
		sqlite3_finalize(st);
		*skip = dup_printf("%s: TARGET_INFO_SESSION_START_TIME has no "
		                   "integer utcEpochNs row; skipped.",
		                   x->display);
		return *skip ? 0 : err_set(e, ERR_NOMEM, "out of memory");
	}
	x->epoch_ns = sqlite3_column_int64(st, 0);
	x->sysclock_ns = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);

	rc = sqlite3_prepare_v2(x->db, "SELECT startTime, stopTime FROM "
	                        "ANALYSIS_DETAILS ORDER BY rowid LIMIT 1", -1,
	                        &st, NULL);
	if (rc != SQLITE_OK)
		return nsys_export_sqlerr(x, rc, "reading the capture bounds", e);
	r = one_row(st, &rc);
	if (r < 0) {
		sqlite3_finalize(st);
		return nsys_export_sqlerr(x, rc, "reading the capture bounds", e);
	}
	int64_t a = 0, b = 0;
	int ok = r == 1 && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
	         sqlite3_column_type(st, 1) == SQLITE_INTEGER;
	if (ok) {
		a = sqlite3_column_int64(st, 0);
		b = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (!ok || b < a) {
		*skip = dup_printf("%s: ANALYSIS_DETAILS has no valid integer "
		                   "startTime/stopTime row; skipped.",
		                   x->display);
		return *skip ? 0 : err_set(e, ERR_NOMEM, "out of memory");
	}
	if (__builtin_sub_overflow(a, x->sysclock_ns, &x->cap_start) ||
	    __builtin_sub_overflow(b, x->sysclock_ns, &x->cap_stop) ||
	    __builtin_add_overflow(x->epoch_ns, x->cap_start,
	                           &x->cap_start_abs) ||
	    __builtin_add_overflow(x->epoch_ns, x->cap_stop, &x->cap_stop_abs))
		return err_set(e, ERR_DATA, "%s: capture bounds out of the "
		               "64-bit nanosecond range", x->display);
	return 0;
}

static int read_optional(struct nsys_export *x, struct err *e)
{
	int rc, r;
	sqlite3_stmt *st;

	r = table_exists(x->db, "TARGET_INFO_SYSTEM_ENV", &rc);
	if (r < 0)
		return nsys_export_sqlerr(x, rc, "listing its tables", e);
	if (r && has_column(x->db, "TARGET_INFO_SYSTEM_ENV", "name", &rc) == 1 &&
	    has_column(x->db, "TARGET_INFO_SYSTEM_ENV", "value", &rc) == 1) {
		rc = sqlite3_prepare_v2(x->db,
			"SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN "
			"('Hostname', 'HostName') AND typeof(value) = 'text' "
			"AND value <> '' ORDER BY rowid LIMIT 1", -1, &st, NULL);
		if (rc != SQLITE_OK)
			return nsys_export_sqlerr(x, rc, "reading the host name", e);
		r = one_row(st, &rc);
		if (r < 0) {
			sqlite3_finalize(st);
			return nsys_export_sqlerr(x, rc, "reading the host name", e);
		}
		if (r == 1) {
			x->hostname = strdup((const char *)
			                     sqlite3_column_text(st, 0));
			if (!x->hostname) {
				sqlite3_finalize(st);
				return err_set(e, ERR_NOMEM, "out of memory");
			}
		}
		sqlite3_finalize(st);
	}
	x->has_thread_names =
		table_exists(x->db, "ThreadNames", &rc) == 1 &&
		has_column(x->db, "ThreadNames", "nameId", &rc) == 1 &&
		has_column(x->db, "ThreadNames", "globalTid", &rc) == 1;
	x->has_samples =
		table_exists(x->db, "COMPOSITE_EVENTS", &rc) == 1 &&
		table_exists(x->db, "SAMPLING_CALLCHAINS", &rc) == 1 &&
		has_column(x->db, "COMPOSITE_EVENTS", "id", &rc) == 1 &&
		has_column(x->db, "COMPOSITE_EVENTS", "start", &rc) == 1 &&
		has_column(x->db, "COMPOSITE_EVENTS", "globalTid", &rc) == 1 &&
		has_column(x->db, "SAMPLING_CALLCHAINS", "id", &rc) == 1 &&
		has_column(x->db, "SAMPLING_CALLCHAINS", "stackDepth", &rc) == 1 &&
		has_column(x->db, "SAMPLING_CALLCHAINS", "symbol", &rc) == 1 &&
		has_column(x->db, "SAMPLING_CALLCHAINS", "unresolved", &rc) == 1;
	x->cuda = table_exists(x->db, "CUPTI_ACTIVITY_KIND_KERNEL", &rc) == 1;
	x->has_text = has_column(x->db, "NVTX_EVENTS", "text", &rc) == 1;
	x->has_text_id = has_column(x->db, "NVTX_EVENTS", "textId", &rc) == 1;
	x->has_gtid = has_column(x->db, "NVTX_EVENTS", "globalTid", &rc) == 1;
	return 0;
}

int nsys_export_open(const char *path, const char *display,
                     struct nsys_export *x, char **skip, struct err *e)
{
	char absbuf[PATH_MAX];
	int rc;

	memset(x, 0, sizeof *x);
	*skip = NULL;
	x->display = strdup(display);
	if (!x->display)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = check_magic(path, display, e)) != 0)
		goto fail;
	if (!realpath(path, absbuf)) {
		rc = err_sys(e, ERR_DATA, "%s: cannot resolve the path", display);
		goto fail;
	}
	char *uri = ro_uri(absbuf);
	if (!uri) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto fail;
	}
	rc = sqlite3_open_v2(uri, &x->db, SQLITE_OPEN_READONLY |
	                     SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		rc = nsys_export_sqlerr(x, rc, "opening it", e);
		goto fail;
	}
	sqlite3_extended_result_codes(x->db, 1);
	/* Ordered scans sort in temporary storage: on disk, bounded memory.
	 * Sorting may use a helper thread (the second core). */
	rc = sqlite3_exec(x->db, "PRAGMA temp_store = FILE; "
	                  "PRAGMA cache_size = -16384; PRAGMA threads = 1;",
	                  NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = nsys_export_sqlerr(x, rc, "configuring it", e);
		goto fail;
	}
	struct buf missing;
	buf_init(&missing, 0);
	if ((rc = check_required(x, &missing, e)) != 0) {
		buf_free(&missing);
		goto fail;
	}
	if (missing.len) {
		*skip = dup_printf("%s: not an Nsight export: %s; skipped.",
		                   display, missing.data);
		buf_free(&missing);
		nsys_export_close(x);
		return *skip ? 0 : err_set(e, ERR_NOMEM, "out of memory");
	}
	buf_free(&missing);
	if ((rc = read_clock(x, skip, e)) != 0)
		goto fail;
	if (*skip) {
		nsys_export_close(x);
		return 0;
	}
	if ((rc = read_optional(x, e)) != 0)
		goto fail;
	return 0;
fail:
	nsys_export_close(x);
	return rc;
}

int nsys_export_file_facts(const char *path, const char *display,
                           int64_t *bytes, int64_t *mtime_ns,
                           char sha256_hex[65],
                           const cancel_flag *cancel, struct err *e)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(e, ERR_DATA, "%s: cannot open the export", display);
	if (fstat(fd, &st) != 0) {
		close(fd);
		return err_sys(e, ERR_DATA, "%s: cannot stat the export", display);
	}
	*bytes = (int64_t)st.st_size;
	*mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
	            st.st_mtim.tv_nsec;
	close(fd);
	if (hash_sha256_file_cancel(path, sha256_hex, NULL, cancel, e))
		return err_prefix(e, "%s: cannot hash the export", display);
	return 0;
}

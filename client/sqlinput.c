/* sqlinput: the statement from a file or stdin (see sqlinput.h). */
#include "sqlinput.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "query/query_sql.h"

/* Reads up to max bytes of f into text; -1 with errno on a read error. */
static int read_all(FILE *f, struct buf *text, size_t max)
{
	char chunk[65536];

	while (text->len < max) {
		size_t want = max - text->len < sizeof chunk ? max - text->len
		                                             : sizeof chunk;
		size_t got = fread(chunk, 1, want, f);
		buf_append(text, chunk, got);
		if (got < want) {
			if (ferror(f))
				return -1;
			break;
		}
	}
	return 0;
}

int sqlinput_read(const char *path, struct buf *text, struct err *e)
{
	char what[ERR_MSG_MAX / 2];
	FILE *f = path ? fopen(path, "rb") : stdin;
	const char *bad;
	int rc;

	if (path)
		snprintf(what, sizeof what, "The statement of --sql-file %s",
		         path);
	else
		snprintf(what, sizeof what,
		         "The statement of --sql - (standard input)");
	if (!f)
		return err_sys(e, ERR_USAGE, "%s cannot be read", what);
	errno = 0;
	rc = read_all(f, text, QUERY_SQL_TEXT_MAX + 1);
	if (rc)
		rc = err_sys(e, ERR_USAGE, "%s cannot be read", what);
	if (path)
		fclose(f);
	if (rc)
		return rc;
	if (text->failed)
		return err_set(e, ERR_NOMEM, "out of memory reading the statement");
	if (text->len >= 3 && !memcmp(text->data, "\xef\xbb\xbf", 3)) {
		memmove(text->data, text->data + 3, text->len - 3);
		text->len -= 3;
	}
	if (text->len > QUERY_SQL_TEXT_MAX)
		return err_set(e, ERR_USAGE, "%s is longer than 1 MiB (1048576 "
		               "bytes), the most sql takes", what);
	if (text->len && memchr(text->data, '\0', text->len))
		return err_set(e, ERR_USAGE, "%s holds a NUL byte (at byte %zu)",
		               what,
		               (size_t)((char *)memchr(text->data, '\0',
		                                       text->len) - text->data));
	if ((bad = utf8_problem(text->data ? text->data : "", text->len)))
		return err_set(e, ERR_USAGE, "%s is not UTF-8 text: it holds %s",
		               what, bad);
	buf_putc(text, '\0');
	if (text->failed)
		return err_set(e, ERR_NOMEM, "out of memory reading the statement");
	text->len--;
	return 0;
}

/* err: error codes and caller-supplied error records (see err.h). */
#include "base/err.h"
#include "base/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

int err_setv(struct err *e, int code, const char *fmt, va_list ap)
{
	if (!e)
		return code;
	e->code = code;
	/* a cut message must stay valid UTF-8 (stderr, frames, MCP) */
	if (vsnprintf(e->msg, sizeof e->msg, fmt, ap) >= (int)sizeof e->msg)
		utf8_trim_tail(e->msg);
	utf8_fix(e->msg, sizeof e->msg); /* bytes quoted from a hostile file */
	return code;
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(e, code, fmt, ap);
	va_end(ap);
	return code;
}

int err_sys(struct err *e, int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (!e)
		return code;
	va_start(ap, fmt);
	err_setv(e, code, fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	if (snprintf(e->msg + n, sizeof e->msg - n, ": %s", strerror(saved)) >=
	    (int)(sizeof e->msg - n))
		utf8_trim_tail(e->msg);
	utf8_fix(e->msg, sizeof e->msg);
	return code;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	char head[ERR_MSG_MAX], old[ERR_MSG_MAX];
	va_list ap;

	if (!e)
		return 0;
	va_start(ap, fmt);
	vsnprintf(head, sizeof head, fmt, ap);
	va_end(ap);
	utf8_trim_tail(head);
	memcpy(old, e->msg, sizeof old);
	/* Truncation is acceptable (messages are bounded by design), but only
	 * on a character boundary. */
	size_t hn = utf8_cut(head, strlen(head), sizeof head - 3);
	memcpy(e->msg, head, hn);
	memcpy(e->msg + hn, ": ", 2);
	size_t on = utf8_cut(old, strlen(old), sizeof e->msg - hn - 3);
	memcpy(e->msg + hn + 2, old, on);
	e->msg[hn + 2 + on] = '\0';
	utf8_fix(e->msg, sizeof e->msg);
	return e->code;
}

int err_exit_status(int code)
{
	return code == ERR_USAGE ? 2 : code == ERR_CLOSED ? 141 : 1;
}

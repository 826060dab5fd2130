/*
 * err: error codes and the caller-supplied error record.
 *
 * Every fallible function in libdsight returns an ERR_* code (0 = success)
 * and, on failure, fills the `struct err` its caller passed in.  The message
 * is a complete user-facing sentence; it is printed once, at the edge (CLI,
 * daemon reply, MCP tool error), never by the library itself.
 */
#ifndef DSIGHT_ERR_H
#define DSIGHT_ERR_H

#include <stdarg.h>

enum {
	ERR_OK = 0,
	ERR_DATA = 1,    /* unreadable, corrupt or invalid data; I/O  (CLI exit 1) */
	ERR_USAGE = 2,   /* bad flags or query parameters (CLI exit 2, RPC -32602) */
	ERR_NOMEM = 3,   /* allocation failed (treated as a data error at the edge) */
	ERR_REBUILT = 4, /* the dataset's generation changed under an open handle */
	ERR_LIMIT = 5,   /* an output or input size limit was exceeded */
	ERR_CLOSED = 6,  /* stdout's reader went away (EPIPE): the CLI stops
	                  * quietly with status 141, as a SIGPIPE death */
};

#define ERR_MSG_MAX 1024

struct err {
	int code;
	char msg[ERR_MSG_MAX];
};

/* Clears e (code 0, empty message). */
void err_clear(struct err *e);

/* Formats the message into e (truncating if needed) and returns code. */
int err_set(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int err_setv(struct err *e, int code, const char *fmt, va_list ap);

/* Like err_set, then appends ": <strerror(errno)>" using the errno value
 * current at the call. */
int err_sys(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends "<prefix>: " to an existing message (keeps the code). */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The CLI exit status for an error code: 2 for ERR_USAGE, 141 for
 * ERR_CLOSED (128 + SIGPIPE, what a shell reports for `cmd | head` when
 * cmd dies of the signal), 1 otherwise. */
int err_exit_status(int code);

#endif

/*
 * lifetime: when dsightd exits on its own.
 *
 * Owns the idle clock (--idle-timeout, --idle-start), owner/orphan detection
 * (the parent pid recorded at start; any change of getppid() means
 * orphaned, reparenting to a subreaper included; polled every 250 ms) and
 * the bookkeeping of requests in progress (never reaped during one).  When
 * the idle limit is reached it calls the on_idle callback once with the
 * reason ("idle for 30m0s").
 */
#ifndef DSIGHT_LIFETIME_H
#define DSIGHT_LIFETIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "base/err.h"

enum { LIFETIME_AUTO = 0, LIFETIME_ORPHANED = 1, LIFETIME_LAST_QUERY = 2 };

/* Parses --idle-timeout: "auto" (1800 s), N, Ns, Nm, Nh; "0", "off",
 * "never" disable (*ms = -1).  ERR_USAGE naming the flag otherwise. */
int lifetime_parse_timeout(const char *s, int64_t *ms, struct err *e);
/* Parses --idle-start: auto, orphaned, last-query. */
int lifetime_parse_start(const char *s, int *mode, struct err *e);
/* Formats a duration like Go: "30m0s", "1h0m0s", "45s", "1.5s". */
void lifetime_format_duration(char *out, size_t n, uint64_t ms);
/* "orphaned" / "last-query". */
const char *lifetime_start_name(int mode);

struct lifetime;

typedef void (*lifetime_idle_fn)(void *ctx, const char *why);

/* How a server's lifetime is clocked. */
struct lifetime_opts {
	int64_t idle_ms;  /* < 0 disables reaping */
	int mode;         /* LIFETIME_AUTO resolves to orphaned (live owner)
	                   * or last-query */
	pid_t owner;      /* the parent pid recorded before any fork */
	int orphaned_now; /* != 0 (a --daemonize'd server): starts orphaned */
	lifetime_idle_fn fn; /* called once when the server should stop */
	void *ctx;
};

/* Starts the clock on loop.  *out is owned by the caller: call
 * lifetime_close (the loop then frees it). */
int lifetime_start(uv_loop_t *loop, const struct lifetime_opts *o,
                   struct lifetime **out, struct err *e);
void lifetime_close(struct lifetime *lt);

void lifetime_request_begin(struct lifetime *lt);
void lifetime_request_end(struct lifetime *lt);

int lifetime_orphaned(const struct lifetime *lt);
/* The effective --idle-start mode (never LIFETIME_AUTO). */
int lifetime_mode(const struct lifetime *lt);
/* Milliseconds since the end of the last request (0 while one runs). */
uint64_t lifetime_idle_ms(const struct lifetime *lt);

#endif

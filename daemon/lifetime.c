/* lifetime: idle clock and orphan detection (see lifetime.h). */
#include "lifetime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLL_MS 250

struct lifetime {
	uv_timer_t timer;
	int64_t idle_ms;
	int mode;
	pid_t owner;
	int orphaned;
	uint64_t orphaned_at;  /* uv_now when orphaned */
	uint64_t last_end;     /* uv_now at start or end of the last request */
	int active;            /* requests in progress */
	int fired;
	lifetime_idle_fn fn;
	void *ctx;
};

int lifetime_parse_timeout(const char *s, int64_t *ms, struct err *e)
{
	char *end;
	double v, mult = 1000;
	size_t n = strlen(s);

	if (!strcmp(s, "auto")) {
		*ms = 1800 * 1000;
		return 0;
	}
	if (!strcmp(s, "off") || !strcmp(s, "never")) {
		*ms = -1;
		return 0;
	}
	if (n == 0 || s[0] < '0' || s[0] > '9')
		goto bad;
	switch (s[n - 1]) {
	case 's': mult = 1000; break;
	case 'm': mult = 60 * 1000; break;
	case 'h': mult = 3600 * 1000; break;
	default:
		/* a bare value is an integer number of seconds */
		if (strspn(s, "0123456789") != n)
			goto bad;
		mult = 0;
	}
	if (mult == 0) {
		v = strtod(s, &end);
		mult = 1000;
	} else {
		/* a number with a unit: digits, at most one '.', digits */
		size_t digits = strspn(s, "0123456789");
		if (s[digits] == '.')
			digits += 1 + strspn(s + digits + 1, "0123456789");
		if (digits != n - 1 || s[digits - 1] == '.')
			goto bad;
		v = strtod(s, &end);
	}
	if (!(v >= 0) || v * mult > 9.0e15)
		goto bad;
	*ms = (int64_t)(v * mult + 0.5);
	if (v == 0)
		*ms = -1;
	else if (*ms == 0)
		*ms = 1;
	return 0;
bad:
	return err_set(e, ERR_USAGE,
	               "--idle-timeout must be auto, off, never, or a duration like 90, 45s, 10m, 1h (got '%s')",
	               s);
}

int lifetime_parse_start(const char *s, int *mode, struct err *e)
{
	if (!strcmp(s, "auto"))
		*mode = LIFETIME_AUTO;
	else if (!strcmp(s, "orphaned"))
		*mode = LIFETIME_ORPHANED;
	else if (!strcmp(s, "last-query"))
		*mode = LIFETIME_LAST_QUERY;
	else
		return err_set(e, ERR_USAGE,
		               "--idle-start must be auto, orphaned or last-query (got '%s')", s);
	return 0;
}

void lifetime_format_duration(char *out, size_t n, uint64_t ms)
{
	uint64_t h = ms / 3600000, m = ms / 60000 % 60, sec = ms / 1000 % 60,
	         frac = ms % 1000;
	char s[32];
	if (frac) {
		char f[8];
		snprintf(f, sizeof f, "%03u", (unsigned)frac);
		for (int k = 2; k > 0 && f[k] == '0'; k--)
			f[k] = '\0';
		snprintf(s, sizeof s, "%u.%ss", (unsigned)sec, f);
	} else {
		snprintf(s, sizeof s, "%us", (unsigned)sec);
	}
	if (h)
		snprintf(out, n, "%lluh%um%s", (unsigned long long)h, (unsigned)m, s);
	else if (m)
		snprintf(out, n, "%um%s", (unsigned)m, s);
	else
		snprintf(out, n, "%s", s);
}

const char *lifetime_start_name(int mode)
{
	return mode == LIFETIME_ORPHANED ? "orphaned" : "last-query";
}

static void tick(uv_timer_t *t)
{
	struct lifetime *lt = t->data;
	uint64_t now = uv_now(t->loop), since;

	if (!lt->orphaned && getppid() != lt->owner) {
		lt->orphaned = 1;
		lt->orphaned_at = now;
	}
	if (lt->fired || lt->idle_ms < 0 || lt->active > 0)
		return;
	if (lt->mode == LIFETIME_ORPHANED && !lt->orphaned)
		return;
	since = lt->last_end;
	if (lt->mode == LIFETIME_ORPHANED && lt->orphaned_at > since)
		since = lt->orphaned_at;
	if (now - since >= (uint64_t)lt->idle_ms) {
		char d[48], why[64];
		/* the limit reached, as configured: "idle for 30m0s" */
		lifetime_format_duration(d, sizeof d, (uint64_t)lt->idle_ms);
		snprintf(why, sizeof why, "idle for %s", d);
		lt->fired = 1;
		lt->fn(lt->ctx, why);
	}
}

int lifetime_start(uv_loop_t *loop, const struct lifetime_opts *o,
                   struct lifetime **out, struct err *e)
{
	struct lifetime *lt = calloc(1, sizeof *lt);
	if (!lt)
		return err_set(e, ERR_NOMEM, "Out of memory");
	lt->idle_ms = o->idle_ms;
	lt->owner = o->owner;
	lt->orphaned = o->orphaned_now || o->owner <= 1 ||
	               getppid() != o->owner;
	lt->mode = o->mode;
	if (lt->mode == LIFETIME_AUTO)
		lt->mode = lt->orphaned ? LIFETIME_LAST_QUERY : LIFETIME_ORPHANED;
	lt->fn = o->fn;
	lt->ctx = o->ctx;
	/* the loop's time as the caller set it: the same instant as the
	 * server's start (status: idle_s == uptime_s until a query) */
	lt->last_end = lt->orphaned_at = uv_now(loop);
	uv_timer_init(loop, &lt->timer);
	lt->timer.data = lt;
	uv_timer_start(&lt->timer, tick, POLL_MS, POLL_MS);
	*out = lt;
	return 0;
}

static void closed(uv_handle_t *h)
{
	free(h->data);
}

void lifetime_close(struct lifetime *lt)
{
	if (lt)
		uv_close((uv_handle_t *)&lt->timer, closed);
}

void lifetime_request_begin(struct lifetime *lt)
{
	lt->active++;
}

void lifetime_request_end(struct lifetime *lt)
{
	lt->active--;
	lt->last_end = uv_now(lt->timer.loop);
}

int lifetime_orphaned(const struct lifetime *lt)
{
	return lt->orphaned || getppid() != lt->owner;
}

int lifetime_mode(const struct lifetime *lt)
{
	return lt->mode;
}

uint64_t lifetime_idle_ms(const struct lifetime *lt)
{
	if (lt->active > 0)
		return 0;
	/* the loop's time as the caller read it (status: one instant for
	 * uptime_s and idle_s) */
	return uv_now(lt->timer.loop) - lt->last_end;
}

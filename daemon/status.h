/*
 * status: the result objects of `hello` and `status` (doc/sessions-protocol.md), built
 * from what the server, the session and the lifetime know.
 */
#ifndef DSIGHT_STATUS_H
#define DSIGHT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "lifetime.h"
#include "server.h"
#include "session.h"

#define STATUS_TIMES 1024 /* server-time samples kept for status */

struct status_input {
	const struct server_info *info;
	struct session *sess;
	struct lifetime *lt;
	uint64_t now_ms;          /* uv_now, same clock as info->started_ms */
	uint64_t queries;
	int connections;
	int sql_streams;          /* streamed sql answers open (sqlstream.h) */
	const uint32_t *times;    /* server time of recent queries, microseconds */
	size_t ntimes;            /* <= STATUS_TIMES */
	uint32_t last_us;
};

/* Appends the status result object to o. */
void status_write(struct buf *o, const struct status_input *in);
/* Appends the hello result object to o. */
void status_hello(struct buf *o, const struct server_info *info,
                  const struct session *sess);

#endif

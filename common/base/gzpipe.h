/*
 * gzpipe: whole gzip members (gz_member) compressed and appended to a file
 * on a worker thread, in the order they are handed over, while the caller
 * prints the next one.  One member is compressed while one is filled, so
 * at most two texts are held.  The file's bytes are the same as when the
 * caller compresses and writes each member itself.
 */
#ifndef DSIGHT_GZPIPE_H
#define DSIGHT_GZPIPE_H

#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

struct gzpipe;

/*
 * Starts a pipe writing to fd (borrowed, open for writing; path names it
 * in errors, borrowed) at gz_member's level.  On success *out is owned by
 * the caller: gzpipe_finish, then gzpipe_free.
 */
int gzpipe_open(int fd, const char *path, int level, struct gzpipe **out,
                struct err *e);

/*
 * Hands *text over as the next member and gives back in *text an empty
 * buffer (the storage of an earlier member, reused).  Blocks while the
 * worker still compresses the member before.  Returns 0, or the worker's
 * first error (then nothing more is written).
 */
int gzpipe_put(struct gzpipe *p, struct buf *text, struct err *e);

/* Waits for the last member; *bytes gets the bytes written in all. */
int gzpipe_finish(struct gzpipe *p, uint64_t *bytes, struct err *e);

/* Stops the worker (a member in progress is finished first) and frees p.
 * NULL is fine. */
void gzpipe_free(struct gzpipe *p);

#endif

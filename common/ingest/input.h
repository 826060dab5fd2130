/*
 * input: sequential reading of a possibly gzip-compressed file.
 *
 * Owns the decision "plain or gzip" (by the magic bytes 1f 8b, never by the
 * file name), zlib inflation (multi-member streams, truncated or corrupt
 * data reported as errors naming the file) and progress accounting in
 * bytes of the file itself.  A background thread reads (and inflates) into
 * a ring of four 1 MiB chunks, so I/O and inflation overlap the caller's
 * parsing; memory stays bounded by the ring whatever the file size.
 */
#ifndef DSIGHT_INPUT_H
#define DSIGHT_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct input;

/* Opens path for reading.  On success *out is a new reader (close it with
 * input_close); on failure e names the file and the reason (ERR_DATA). */
int input_open(const char *path, struct input **out, struct err *e);

/* The next chunk of (decompressed) content: *data points into the
 * reader's storage and stays valid until the next call or input_close;
 * *n is 0 only at the end of the content.  Errors (I/O, corrupt or
 * truncated gzip) are ERR_DATA with the file named.  The file is read
 * (and inflated) on a background thread, a few chunks ahead of the caller. */
int input_next(struct input *in, const char **data, size_t *n, struct err *e);

/* True when the file is gzip. */
int input_is_gzip(const struct input *in);

/* Bytes of the file behind the chunks returned so far, and the file size
 * (0 if unknown). */
uint64_t input_consumed(const struct input *in);
uint64_t input_size(const struct input *in);

/* Closes the file and frees the reader (NULL is fine). */
void input_close(struct input *in);

#endif

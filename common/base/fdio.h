/*
 * fdio: whole writes to a file descriptor.
 */
#ifndef DSIGHT_FDIO_H
#define DSIGHT_FDIO_H

#include <stddef.h>

/* Writes all n bytes of p to fd, retrying short writes and EINTR.
 * Returns 0, or -1 with errno set by the failing write. */
int fdio_write_all(int fd, const void *p, size_t n);

#endif

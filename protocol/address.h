/*
 * address: session names, address resolution and the socket directory.
 *
 * A name matches ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$; without one the server
 * makes a three-word adjective-colour-animal name.  Resolution of an ADDR
 * (doc/sessions-protocol.md): "://" or a ":<digits>" suffix is a TCP address (reserved);
 * an absolute path or a ".sock" suffix is a socket path; anything else is a
 * name, at the convention path <dir>/<name>.sock.  The directory is
 * $XDG_RUNTIME_DIR/dsight when $XDG_RUNTIME_DIR is a directory owned by the
 * user with no group/other bits, else ${TMPDIR:-/tmp}/dsight-<uid>; it is
 * created 0700 and an existing one must be a real directory owned by the
 * user with no group/other bits.  Paths that do not fit sun_path are
 * refused, never truncated.
 */
#ifndef DSIGHT_ADDRESS_H
#define DSIGHT_ADDRESS_H

#include <stddef.h>

#include "base/err.h"

#define ADDRESS_NAME_MAX 64
#define ADDRESS_PATH_MAX 108 /* sizeof(sun_path): 107 bytes plus NUL */

enum { ADDRESS_SOCKET = 1, ADDRESS_TCP = 2 };

struct address {
	int kind;
	int by_name;                      /* resolved from a name */
	char name[ADDRESS_NAME_MAX + 1];  /* by_name: the name */
	char path[ADDRESS_PATH_MAX];      /* ADDRESS_SOCKET: the socket path */
};

/* 1 when name is a valid session name. */
int address_name_valid(const char *name);

/* Writes a random adjective-colour-animal name (NUL-terminated) into out
 * (at least ADDRESS_NAME_MAX + 1 bytes). */
void address_generate_name(char *out, size_t n);

/*
 * The socket directory for names.  create != 0 creates it (0700) when
 * missing; create == 0 leaves a missing one alone (and still returns its
 * path, with *exists = 0).  An unsafe existing directory is ERR_USAGE with
 * a message saying what is wrong and how to fix it.
 */
int address_socket_dir(char *out, size_t n, int create, int *exists,
                       struct err *e);

/*
 * Resolves addr.  create != 0 creates the socket directory for a name (the
 * server); clients pass 0.  TCP addresses are ERR_USAGE "... is not served
 * yet"; an invalid name or a path too long for sun_path is ERR_USAGE.
 */
int address_resolve(const char *addr, int create, struct address *a,
                    struct err *e);

/* Checks that path fits sun_path (ERR_USAGE asking for a shorter --path). */
int address_check_path(const char *path, struct err *e);

#endif

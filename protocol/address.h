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
 *
 * It also owns the files of a socket (doc/sessions-protocol.md): the lock
 * <socket>.lock held for the server's life, the bind (mode 0600; a
 * leftover socket is removed only when it refuses connections), the
 * connect with a timeout (a full listen queue is waited for), the reaping
 * of files left by dead servers, the files created beside a socket
 * (opened without following symlinks, never another owner's), and the
 * "No live session" message.
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

/*
 * An explicit socket path (--path, or an ADDR that is a path) as used:
 * a relative path is made absolute against the working directory when the
 * result fits sun_path (else kept as given).  out has ADDRESS_PATH_MAX
 * bytes.  ERR_USAGE when path itself does not fit.
 */
int address_explicit_path(const char *path, char *out, struct err *e);

/* The lock file of a socket: "<sock>.lock" into out (n bytes; truncation
 * cannot happen with n >= ADDRESS_PATH_MAX + 5). */
void address_lock_path(const char *sock, char *out, size_t n);

/*
 * Takes the exclusive lock on <sock>.lock for the caller's life (*fd owned
 * by the caller; closing it releases the lock).  The file is created 0600
 * without following a symlink; one owned by another user is refused.  When
 * another live server holds it, *busy = 1 and e says
 * "A live session already holds <shown>. ..." (ERR_DATA).
 */
int address_lock(const char *sock, const char *shown, int *fd, int *busy,
                 struct err *e);

/*
 * Binds and listens at sock (mode 0600).  An existing file there must be a
 * socket that refuses connections (a dead server's): it is removed; a live
 * listener of any program, or a file that is not a socket, is refused
 * (ERR_USAGE: a refused --path).  Call with the lock held.  *fd owned by the caller.
 */
int address_bind(const char *sock, int backlog, int *fd, struct err *e);

/*
 * Connects to sock within timeout_ms (a full listen queue is waited for,
 * not treated as connected).  *fd is the connected socket, non-blocking
 * and close-on-exec, owned by the caller.  On failure *not_live is 1 when
 * nothing listens there (no file, connection refused): the caller prints
 * address_not_live's message.
 */
int address_connect(const char *sock, int timeout_ms, int *fd, int *not_live,
                    struct err *e);

/* 1 when nothing listens at sock any more: no file there, or a socket
 * that refuses connections (a server that stopped or crashed). */
int address_gone(const char *sock);

/*
 * Removes the socket and lock left by a dead server: only when nobody
 * holds <sock>.lock, and the socket only when it is a socket that refuses
 * connections (never a regular file, never a live listener).  sock may be
 * NULL (a lock without a socket).  Returns 1 when it reaped, 0 when a live
 * server holds the lock or the socket is not a dead socket.
 */
int address_reap(const char *sock, const char *lock);

/*
 * Opens (creating 0600) a file beside a socket for appending, such as the
 * log: never follows a symlink, refuses a file owned by another user or
 * that is not a regular file, and truncates it only when truncate != 0
 * (after those checks).  *fd owned by the caller.
 */
int address_open_beside(const char *path, int truncate, int *fd,
                        struct err *e);

/* The message when nothing listens at a resolved address:
 * "No live session at <path>. Start one with: dsightd serve REPORT --name
 * <name>" (--path <path> for a path). */
void address_not_live(const struct address *a, char *out, size_t n);

#endif

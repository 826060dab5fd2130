/*
 * dsapi: the C interface of libdsight.so for language bindings (the Python
 * package `dsight` loads it with ctypes).
 *
 * A handle opens one dataset (report directory, SQLite cache or evidence
 * document: the same dataset_open as `dsight query`) and answers queries
 * given as an RPC params object (JSON text, parameters by their RPC names,
 * decoded by the same table as the daemon's), returning the engine's JSON
 * text: byte for byte what `dsight query` prints, without the newline.
 *
 * A handle is used by one thread at a time; dsapi_clone gives another
 * thread its own handle on the same data.  Before each query the handle
 * compares the data file's identity with the one it opened and reopens a
 * rebuilt report by itself, as the warm daemon does.
 *
 * Errors: functions return 0 or an ERR_* code (base/err.h: 1 data or I/O,
 * 2 usage or validation, 3 out of memory, 4 rebuilt, 5 limit) and copy the
 * message, NUL-terminated and cut on a character boundary, into the
 * caller's msg buffer of msglen bytes.
 */
#ifndef DSIGHT_DSAPI_H
#define DSIGHT_DSAPI_H

#include <stddef.h>

struct dsapi;

/* Opens path.  On success *out belongs to the caller (dsapi_close). */
int dsapi_open(const char *path, struct dsapi **out, char *msg, size_t msglen);

/* A second handle on the same data (shares the catalog and, for an
 * evidence document, the rows), for another thread.  Owned by the caller;
 * may outlive h. */
int dsapi_clone(struct dsapi *h, struct dsapi **out, char *msg, size_t msglen);

/* Closes h (NULL is a no-op). */
void dsapi_close(struct dsapi *h);

/*
 * Runs one query.  params is a JSON object text (NULL or "" = {}).  On
 * success *out is a malloc'd NUL-terminated JSON text of *outlen bytes,
 * owned by the caller (dsapi_free).  On failure *out is NULL.
 */
int dsapi_query(struct dsapi *h, const char *params, char **out,
                size_t *outlen, char *msg, size_t msglen);

/* The generation id the handle answers from (borrowed, valid until the
 * next dsapi_query or dsapi_close on h). */
const char *dsapi_generation(struct dsapi *h);

/*
 * Resolves a session address (a name, a socket path; what `dsight query
 * --remote` accepts) without creating anything: path receives the socket
 * path (pathlen >= 108), shown the message to give when nothing listens
 * there ("No live session at ... Start one with: ..."; shownlen bytes).
 * ERR_USAGE for an invalid name, a TCP address or a path too long.
 */
int dsapi_resolve(const char *addr, char *path, size_t pathlen, char *shown,
                  size_t shownlen, char *msg, size_t msglen);

/* The JSON description of the tables of kinds and parameters (malloc'd,
 * caller frees with dsapi_free); NULL when out of memory. */
char *dsapi_describe(void);

/* The library's version ("0.1.0"; static). */
const char *dsapi_version(void);

/* Frees a text returned by dsapi_query or dsapi_describe. */
void dsapi_free(char *p);

#endif

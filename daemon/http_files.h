/*
 * http_files: the responses of the HTTP transport (libmicrohttpd response
 * objects): the viewer of a generation with its live marker, its files
 * (shards with immutable caching, parts), the page of a report without a
 * viewer, JSON errors and JSON-RPC bodies.  Loop thread.
 */
#ifndef DSIGHT_HTTP_FILES_H
#define DSIGHT_HTTP_FILES_H

#include <stddef.h>

#include "session.h"

struct MHD_Response;

/* index.html of g with the live marker (<meta name="dsight-live"
 * content="GENERATION">) after <head>; or, when g has no viewer, a small
 * page saying why and how to build one.  Takes over the reference g (the
 * response holds it until sent).  *status the HTTP status.  NULL when out
 * of memory. */
struct MHD_Response *http_files_index(struct session_gen *g, unsigned *status);
/* The file rel ("detail/<name>", "parts.json", "part-NNN.html") of g, or
 * a 404 when g's manifest does not list it.  gzip_ok: the request accepts
 * Content-Encoding gzip (a shard is then sent as such; else as its gzip
 * bytes, which the viewer gunzips itself).  NULL when out of memory. */
struct MHD_Response *http_files_file(const struct session_gen *g, const char *rel,
                                     int gzip_ok, unsigned *status);
/* {"error": msg} as application/json. */
struct MHD_Response *http_files_error(const char *msg);
/* A JSON body (malloc'd, taken over) as application/json. */
struct MHD_Response *http_files_json(char *body, size_t len);
#define HTTP_FILES_NDJSON "application/x-ndjson"
/* A streamed JSON-RPC answer's headers: NDJSON, and the common ones. */
void http_files_ndjson(struct MHD_Response *r);
/* The headers every response carries (no caching unless a file sets it,
 * nosniff, no referrer). */
void http_files_common(struct MHD_Response *r);

#endif

/*
 * http_auth: who may talk to a session over HTTP, and where it listens.
 *
 * Owns the --http address (parsing [HOST:]PORT, the loopback rule, the
 * bind: before anything else is bound, so a port in use leaves nothing
 * behind), the session's secret token (32 random bytes from the OS,
 * hex-encoded; compared in constant time), its file <socket>.http
 * (mode 0600, one line "URL TOKEN"), and the per-request rules against
 * DNS rebinding and cross-site requests: the Host header must name the
 * listener, an Origin header must be the listener's own origin.  Pure
 * checks, no I/O per request: http.c asks, and answers 401/403 itself.
 */
#ifndef DSIGHT_HTTP_AUTH_H
#define DSIGHT_HTTP_AUTH_H

#include <stddef.h>

#include "base/err.h"

#define HTTP_AUTH_TOKEN_LEN 64  /* hex digits */
#define HTTP_AUTH_HOSTS 5

struct http_auth {
	char token[HTTP_AUTH_TOKEN_LEN + 1];
	char url[320];                       /* http://HOST:PORT/ (the bound address) */
	int port;
	int any_host;                        /* --allow-remote on a wildcard address */
	int remote;                          /* not a loopback address */
	char hosts[HTTP_AUTH_HOSTS][300];    /* accepted Host values (host:port) */
	int nhosts;
};

/*
 * Parses spec ([HOST:]PORT; HOST 127.0.0.1 by default, localhost, an IPv4
 * literal, an IPv6 literal in brackets, or with allow_remote a name) and
 * binds a listening TCP socket there (*fd owned by the caller, non-blocking
 * and close-on-exec).  Fills a's address, URL and accepted hosts.  A HOST
 * that is not loopback without allow_remote is ERR_USAGE; a port in use is
 * ERR_DATA naming the address.
 */
int http_auth_listen(const char *spec, int allow_remote, struct http_auth *a,
                     int *fd, struct err *e);
/* Makes a fresh token into a->token (getrandom). */
int http_auth_new_token(struct http_auth *a, struct err *e);
/* Writes "URL TOKEN\n" to path (0600, never through a symlink, truncating
 * an old file of the user's). */
int http_auth_write_file(const struct http_auth *a, const char *path,
                         struct err *e);

/* 1 when host (the Host header, may be NULL) names the listener. */
int http_auth_host_ok(const struct http_auth *a, const char *host);
/* 1 when origin (may be NULL: no header) is absent or the listener's
 * origin as the request reached it ("http://" + host). */
int http_auth_origin_ok(const char *origin, const char *host);
/* 1 when t (NUL-terminated, may be NULL) is the token; constant time in
 * the token's length. */
int http_auth_token_ok(const struct http_auth *a, const char *t);
/* The token carried by a request: "Bearer T" in authorization, else the
 * dsight_token cookie of cookie; copied into out (HTTP_AUTH_TOKEN_LEN + 2
 * bytes, longer values cut, still failing the comparison).  0 when none. */
int http_auth_request_token(const char *authorization, const char *cookie,
                            char *out);

#endif

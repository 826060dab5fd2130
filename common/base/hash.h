/*
 * hash: SHA-256 in lowercase hex (OpenSSL libcrypto), of a buffer or a
 * file.  Used for manifest hashes and content-addressed file names.
 */
#ifndef DSIGHT_HASH_H
#define DSIGHT_HASH_H

#include <stddef.h>

#include "base/cancel.h"
#include "base/err.h"

#define HASH_HEX_LEN 64

/* Streaming state; one per running hash. */
struct hash_sha256 {
	void *ctx; /* EVP_MD_CTX */
};

int hash_sha256_begin(struct hash_sha256 *h, struct err *e);
void hash_sha256_update(struct hash_sha256 *h, const void *p, size_t n);
/* Writes 64 hex digits + NUL to out and frees the state. */
void hash_sha256_end(struct hash_sha256 *h, char out[HASH_HEX_LEN + 1]);
/* Frees the state without a result (after an error). */
void hash_sha256_abort(struct hash_sha256 *h);

/* SHA-256 of n bytes at p. */
int hash_sha256_hex(const void *p, size_t n, char out[HASH_HEX_LEN + 1],
                    struct err *e);
/* SHA-256 of the file at path; *size (may be NULL) gets its size. */
int hash_sha256_file(const char *path, char out[HASH_HEX_LEN + 1],
                     unsigned long long *size, struct err *e);
/* The same, stopping with ERR_DATA "interrupted" soon after *cancel
 * becomes non-zero (cancel may be NULL): a file may be gigabytes. */
int hash_sha256_file_cancel(const char *path, char out[HASH_HEX_LEN + 1],
                            unsigned long long *size,
                            const cancel_flag *cancel, struct err *e);

#endif

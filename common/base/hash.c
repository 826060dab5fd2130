/* hash: SHA-256 hex digests (see hash.h). */
#include "base/hash.h"
#include "base/cancel.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

int hash_sha256_begin(struct hash_sha256 *h, struct err *e)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	h->ctx = c;
	if (!c || !EVP_DigestInit_ex(c, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(c);
		h->ctx = NULL;
		return err_set(e, ERR_NOMEM, "cannot start a SHA-256 digest");
	}
	return 0;
}

void hash_sha256_update(struct hash_sha256 *h, const void *p, size_t n)
{
	if (n)
		EVP_DigestUpdate(h->ctx, p, n);
}

void hash_sha256_end(struct hash_sha256 *h, char out[HASH_HEX_LEN + 1])
{
	unsigned char md[32];
	unsigned int n = 0;

	static const char hex[] = "0123456789abcdef";

	EVP_DigestFinal_ex(h->ctx, md, &n);
	for (unsigned i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[HASH_HEX_LEN] = '\0';
	hash_sha256_abort(h);
}

void hash_sha256_abort(struct hash_sha256 *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

int hash_sha256_hex(const void *p, size_t n, char out[HASH_HEX_LEN + 1],
                    struct err *e)
{
	struct hash_sha256 h;

	if (hash_sha256_begin(&h, e))
		return e->code;
	hash_sha256_update(&h, p, n);
	hash_sha256_end(&h, out);
	return 0;
}

int hash_sha256_file(const char *path, char out[HASH_HEX_LEN + 1],
                     unsigned long long *size, struct err *e)
{
	return hash_sha256_file_cancel(path, out, size, NULL, e);
}

int hash_sha256_file_cancel(const char *path, char out[HASH_HEX_LEN + 1],
                            unsigned long long *size,
                            const cancel_flag *cancel, struct err *e)
{
	struct hash_sha256 h;
	unsigned long long total = 0;
	char *chunk;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_sys(e, ERR_DATA, "cannot open %s", path);
	chunk = malloc(1 << 20);
	if (!chunk) {
		close(fd);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	if (hash_sha256_begin(&h, e)) {
		free(chunk);
		close(fd);
		return e->code;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || cancel_requested(cancel)) {
			if (n < 0)
				err_sys(e, ERR_DATA, "cannot read %s", path);
			else
				err_set(e, ERR_DATA, "interrupted");
			hash_sha256_abort(&h);
			free(chunk);
			close(fd);
			return e->code;
		}
		if (n == 0)
			break;
		hash_sha256_update(&h, chunk, (size_t)n);
		total += (unsigned long long)n;
	}
	hash_sha256_end(&h, out);
	free(chunk);
	close(fd);
	if (size)
		*size = total;
	return 0;
}

/* text: Unicode lowercase substring matching (see text.h). */
#include "base/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unicase.h>

char *text_lower(const char *s, size_t n, size_t *outlen)
{
	size_t len = 0;
	uint8_t *r = u8_tolower((const uint8_t *)s, n, NULL, NULL, NULL, &len);
	char *out;

	if (!r) {
		/* Invalid UTF-8 (or no memory): keep the bytes as they are. */
		len = n;
		r = malloc(n ? n : 1);
		if (!r)
			return NULL;
		if (n)
			memcpy(r, s, n);
	}
	out = realloc(r, len + 1);
	if (!out) {
		free(r);
		return NULL;
	}
	out[len] = '\0';
	*outlen = len;
	return out;
}

int text_contains(const char *hay, size_t hay_len, const char *needle_lower,
                  size_t needle_len)
{
	size_t len;
	char *low;
	int hit;

	if (needle_len == 0)
		return 1;
	low = text_lower(hay, hay_len, &len);
	if (!low)
		return 0;
	hit = memmem(low, len, needle_lower, needle_len) != NULL;
	free(low);
	return hit;
}

// SPDX-License-Identifier: MIT
/*
 * json.c - the one JSON string writer of the collector's JSON outputs
 * (/targets, /processes, /metrics' comments, the leak trends, the
 * pre-OOM snapshot list).  The strings come from untrusted processes
 * (comm, exe, cgroup paths, symbol names), so the output is valid JSON
 * whatever the bytes: RFC 8259 escapes for '"', '\\' and control bytes,
 * and U+FFFD for every byte that does not start a well-formed UTF-8
 * sequence (RFC 3629 section 4: no overlong forms, no surrogates, nothing
 * above U+10FFFF).
 */
#include <stdint.h>
#include <stdio.h>

#include "export.h"

/* The length of the well-formed UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void hs_json__str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		size_t n = utf8_len(s);

		if (!n) {
			fputs("\\ufffd", f);
			s++;
		} else if (*s == '"' || *s == '\\') {
			fprintf(f, "\\%c", *s++);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s++);
		} else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
	fputc('"', f);
}

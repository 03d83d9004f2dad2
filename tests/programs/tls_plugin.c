/* SPDX-License-Identifier: MIT */
/*
 * tests/programs/tls_plugin.c - a plugin that takes static TLS: 256 bytes
 * of initial-exec TLS, half of the 512 bytes glibc keeps by default for
 * all dlopen'ed initial-exec TLS (glibc.rtld.optional_static_tls).
 * dlopen'ed by dlopen_tls_host before libheapscope.so.
 */
#include <stddef.h>

#define TLS_PLUGIN_BYTES 256

static __thread __attribute__((tls_model(
	"initial-exec"))) unsigned char plugin_block[TLS_PLUGIN_BYTES];

/* Fills the calling thread's block with v and returns the sum of its
 * bytes (TLS_PLUGIN_BYTES * v when the block is the thread's own). */
__attribute__((visibility("default"))) size_t tls_plugin_fill(unsigned char v)
{
	size_t sum = 0;
	for (size_t i = 0; i < TLS_PLUGIN_BYTES; i++)
		plugin_block[i] = v;
	for (size_t i = 0; i < TLS_PLUGIN_BYTES; i++)
		sum += ((volatile unsigned char *)plugin_block)[i];
	return sum;
}

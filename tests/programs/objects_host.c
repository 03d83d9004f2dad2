// SPDX-License-Identifier: MIT
/*
 * objects_host.c - test_objects_hostile.sh's program: dlopens LIB (argv[1]),
 * prints "loaded", waits for a line on stdin (the test replaces LIB's file
 * meanwhile), then calls victim_alloc(32) at sampling period 1 and exits,
 * so HEAPSCOPE_PROFILE_AT_EXIT symbolizes from the replaced file.
 * Exit: 0, or 2 when LIB cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	char line[16];
	int (*fn)(int);
	void *h;

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW)))
		return 2;
	fn = (int (*)(int))dlsym(h, "victim_alloc");
	if (!fn)
		return 2;
	printf("loaded\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	return fn(32) == 32 ? 0 : 3;
}

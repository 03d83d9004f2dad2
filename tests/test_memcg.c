// SPDX-License-Identifier: MIT
/*
 * test_memcg.c - collector/target/memcg.c against crafted inputs: which
 * cgroup a /proc/PID/cgroup text names (v1 memory controller first, the
 * unified line otherwise, hostile paths refused), and the usage / limit
 * the OOM killer would compare (the tightest of the cgroup and its
 * ancestors) over a directory tree built here, v1 and v2 spellings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "target.h"

static char root[64];

static void put(const char *rel, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s/%s", root, rel, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/hs-memcg-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

static int parse(const struct hs_memcg_mounts *m, const char *text,
		 struct hs_memcg *cg)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", text);
	return hs_memcg__parse(m, buf, cg);
}

static void test_parse(void **state)
{
	struct hs_memcg_mounts both = {.v1 = "/sys/fs/cgroup/memory",
				       .v2 = "/sys/fs/cgroup/unified"},
			       v2only = {.v2 = "/sys/fs/cgroup"};
	struct hs_memcg cg;

	(void)state;
	/* hybrid: the memory controller's v1 line wins */
	assert_int_equal(
		parse(&both,
		      "12:pids:/x\n5:cpu,memory:/svc/a\n0::/user.slice\n", &cg),
		0);
	assert_int_equal(cg.version, 1);
	assert_string_equal(cg.path, "/svc/a");
	assert_string_equal(cg.dir, "/sys/fs/cgroup/memory/svc/a");
	/* v2 only (or v1 without the memory line): the unified line */
	assert_int_equal(parse(&v2only, "0::/system.slice/x.service\n", &cg),
			 0);
	assert_int_equal(cg.version, 2);
	assert_string_equal(cg.dir, "/sys/fs/cgroup/system.slice/x.service");
	assert_int_equal(parse(&both, "3:cpu:/a\n0::/b\n", &cg), 0);
	assert_int_equal(cg.version, 2);
	assert_string_equal(cg.dir, "/sys/fs/cgroup/unified/b");
	/* the root cgroup: the mount point itself */
	assert_int_equal(parse(&v2only, "0::/\n", &cg), 0);
	assert_string_equal(cg.dir, "/sys/fs/cgroup");
	/* nothing usable, or paths the kernel never prints */
	assert_int_equal(parse(&v2only, "5:memory:/a\n", &cg), -ENOENT);
	assert_int_equal(parse(&both, "", &cg), -ENOENT);
	assert_int_equal(parse(&both, "5:memory:../../etc\n", &cg), -EBADMSG);
	assert_int_equal(parse(&both, "5:memory:/a/../../etc\n", &cg),
			 -EBADMSG);
	assert_int_equal(parse(&both, "5:memory:/a/..\n", &cg), -EBADMSG);
	assert_int_equal(cg.version, 0);
}

/* cg for root/REL in a hierarchy mounted at root (version v) */
static void cg_at(struct hs_memcg *cg, int v, const char *rel)
{
	memset(cg, 0, sizeof(*cg));
	cg->version = v;
	snprintf(cg->path, sizeof(cg->path), "%s", rel);
	snprintf(cg->dir, sizeof(cg->dir), "%s%s", root, rel);
}

static void test_usage_v1(void **state)
{
	struct hs_memcg cg;
	uint64_t u, l;

	(void)state;
	mk("/a");
	mk("/a/b");
	/* the hierarchy's root has files too: never a limit (not read) */
	put("", "memory.usage_in_bytes", "999999\n");
	put("", "memory.limit_in_bytes", "1000\n");
	put("/a", "memory.usage_in_bytes", "300\n");
	put("/a", "memory.limit_in_bytes", "1000\n");
	put("/a/b", "memory.usage_in_bytes", "200\n");
	put("/a/b", "memory.limit_in_bytes", "250\n");
	cg_at(&cg, 1, "/a/b");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), 0);
	assert_int_equal(u, 200); /* 0.8 of its own beats 0.3 above */
	assert_int_equal(l, 250);
	/* own limit "unlimited" (PAGE_COUNTER_MAX pages): the parent's */
	put("/a", "memory.usage_in_bytes", "900\n");
	put("/a/b", "memory.limit_in_bytes", "9223372036854771712\n");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), 0);
	assert_int_equal(u, 900);
	assert_int_equal(l, 1000);
	/* no limit anywhere: 0, and the cgroup's own usage */
	put("/a", "memory.limit_in_bytes", "9223372036854771712\n");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), 0);
	assert_int_equal(u, 200);
	assert_int_equal(l, 0);
	/* garbage and a cgroup that is gone */
	put("/a/b", "memory.usage_in_bytes", "12ab\n");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), -EBADMSG);
	put("/a/b", "memory.usage_in_bytes", "-5\n");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), -EBADMSG);
	/* the peak: the cgroup's own file */
	put("/a/b", "memory.max_usage_in_bytes", "268435456\n");
	assert_int_equal(hs_memcg__peak(&cg, &u), 0);
	assert_int_equal(u, 268435456);
	put("/a/b", "memory.max_usage_in_bytes", "x\n");
	assert_int_equal(hs_memcg__peak(&cg, &u), -EBADMSG);
	cg_at(&cg, 1, "/gone");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), -ENOENT);
	assert_int_equal(hs_memcg__peak(&cg, &u), -ENOENT);
	cg.version = 0;
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), -ENOENT);
}

static void test_usage_v2(void **state)
{
	struct hs_memcg cg;
	uint64_t u, l;
	double avg10;

	(void)state;
	mk("/s");
	mk("/s/t");
	put("/s", "memory.current", "4096\n");
	put("/s", "memory.max", "8192\n");
	put("/s/t", "memory.current", "1024\n");
	put("/s/t", "memory.max", "max\n");
	put("/s/t", "memory.pressure",
	    "some avg10=12.50 avg60=3.00 avg300=1.00 total=123\n"
	    "full avg10=1.00 avg60=0.00 avg300=0.00 total=9\n");
	cg_at(&cg, 2, "/s/t");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), 0);
	assert_int_equal(u, 4096);
	assert_int_equal(l, 8192);
	put("/s/t", "memory.peak", "2048\n");
	assert_int_equal(hs_memcg__peak(&cg, &u), 0);
	assert_int_equal(u, 2048);
	assert_int_equal(hs_memcg__pressure(&cg, &avg10), 0);
	assert_true(avg10 > 12.49 && avg10 < 12.51);
	put("/s/t", "memory.pressure", "some avg10=250.00\n");
	assert_int_equal(hs_memcg__pressure(&cg, &avg10), -EBADMSG);
	put("/s", "memory.max", "max\n");
	assert_int_equal(hs_memcg__usage(&cg, &u, &l), 0);
	assert_int_equal(u, 1024);
	assert_int_equal(l, 0);
	cg.version = 1;
	assert_int_equal(hs_memcg__pressure(&cg, &avg10), -ENOTSUP);
}

static void test_self(void **state)
{
	struct hs_memcg_mounts m;
	struct hs_memcg cg;

	(void)state;
	/* whatever this machine has: a found cgroup has an absolute dir */
	hs_memcg__mounts(&m);
	if (hs_memcg__of(&m, getpid(), &cg) == 0) {
		assert_true(cg.version == 1 || cg.version == 2);
		assert_true(cg.dir[0] == '/');
	}
	assert_int_equal(hs_memcg__of(&m, 0x7ffffff0, &cg), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_usage_v1),
		cmocka_unit_test(test_usage_v2),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: MIT
/*
 * test_cgroup_ids.c - cmocka table test of hs_proc__cgroup_ids: the
 * container id and systemd unit of the cgroup v2 path forms that docker
 * (cgroupfs and systemd drivers), containerd (CRI), cri-o, podman and
 * Kubernetes write, and paths that must yield neither (short or upper-case
 * hex, conmon scopes, empty, only slashes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "target.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static const struct {
	const char *cgroup, *id, *unit;
} cases[] = {
	/* docker, cgroupfs driver */
	{"/docker/" ID, ID, ""},
	/* docker, systemd driver */
	{"/system.slice/docker-" ID ".scope", ID, ""},
	/* containerd CRI under kubelet's systemd driver */
	{"/kubepods.slice/kubepods-burstable.slice/"
	 "kubepods-burstable-pod1234_5678.slice/cri-containerd-" ID ".scope",
	 ID, ""},
	/* cri-o */
	{"/kubepods.slice/kubepods-besteffort.slice/"
	 "kubepods-besteffort-podab_cd.slice/crio-" ID ".scope",
	 ID, ""},
	/* cri-o's monitor is not the container */
	{"/kubepods.slice/crio-conmon-" ID ".scope", "", ""},
	/* podman */
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
	 ".scope",
	 ID, "user@1000.service"},
	{"/machine.slice/libpod-conmon-" ID ".scope", "", ""},
	/* kubernetes, cgroupfs driver: /kubepods/QOS/podUID/ID */
	{"/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb-cccc-123456789abc/" ID, ID,
	 ""},
	/* nested: the innermost id wins */
	{"/docker/" ID2 "/docker/" ID, ID, ""},
	/* a container inside a service's cgroup */
	{"/system.slice/containerd.service/kubepods/besteffort/podx/" ID, ID,
	 "containerd.service"},
	/* systemd units only */
	{"/system.slice/ssh.service", "", "ssh.service"},
	{"/system.slice/a.service/b.service", "", "b.service"},
	{"/user.slice/user-0.slice/session-3.scope", "", ""},
	/* nothing */
	{"/", "", ""},
	{"", "", ""},
	{"///", "", ""},
	{"/.service", "", ""},
	{"/docker/"
	 "0123456789abcdef",
	 "", ""},
	{"/docker/"
	 "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
	 "", ""},
	{"/docker/" ID "0", "", ""},
	{"/system.slice/docker-" ID ".scopex", "", ""},
	{"/system.slice/docker-" ID, ID, ""},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char id[HS_CONTAINER_ID_LEN + 1], unit[64];

		memset(id, 'x', sizeof(id));
		memset(unit, 'x', sizeof(unit));
		hs_proc__cgroup_ids(cases[i].cgroup, id, unit, sizeof(unit));
		print_message("%s\n", cases[i].cgroup);
		assert_string_equal(id, cases[i].id);
		assert_string_equal(unit, cases[i].unit);
	}
}

/* A unit that does not fit is left out, not truncated. */
static void test_unit_too_long(void **state)
{
	char id[HS_CONTAINER_ID_LEN + 1], unit[12];

	(void)state;
	hs_proc__cgroup_ids("/system.slice/a.service/averylongname.service", id,
			    unit, sizeof(unit));
	assert_string_equal(unit, "");
	hs_proc__cgroup_ids("/s.service/averylongname.service", id, unit,
			    sizeof(unit));
	assert_string_equal(unit, "");
	hs_proc__cgroup_ids("/averylongname.service/s.service", id, unit,
			    sizeof(unit));
	assert_string_equal(unit, "s.service");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_unit_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/* The sockmap probes: BTF lookup of redirect flags by name, and the live redirect probe (root). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "datapath/sockmap_probe.h"

/* BPF_F_INGRESS is in the same anonymous enum as BPF_F_PERMANENT would be. */
static void btf_finds_ingress_flag(void **state)
{
	uint64_t value = 0;
	int ret;

	(void)state;
	ret = velo_sockmap_btf_flag("BPF_F_INGRESS", &value);
	if (ret == -ENOENT || ret == -ESRCH)
		skip(); /* a kernel without BTF */
	assert_int_equal(ret, 0);
	assert_int_equal(value, 1);
}

static void btf_misses_unknown_name(void **state)
{
	uint64_t value = 0;

	(void)state;
	assert_int_equal(velo_sockmap_btf_flag("VELO_NO_SUCH_FLAG", &value), -ENOENT);
}

static void redirect_without_extra_flag_works(void **state)
{
	(void)state;
	if (geteuid())
		skip();
	assert_int_equal(velo_sockmap_flag_probe(0), 0);
}

/* What an absent BPF_F_PERMANENT does: the helper refuses, the send fails with EACCES. */
static void redirect_with_unknown_flag_is_eacces(void **state)
{
	(void)state;
	if (geteuid())
		skip();
	assert_int_equal(velo_sockmap_flag_probe(1ull << 40), -EACCES);
}

/*
 * The probe's answer matches what the test finds itself: the BTF lookup and, for a named flag,
 * a live redirect with it. The struct starts poisoned so no field passes by being left alone.
 */
static void probe_matches_btf_and_live_redirect(void **state)
{
	struct velo_sockmap_features features;
	uint64_t value = 0, expect_flag = 0;
	bool in_btf;

	(void)state;
	if (geteuid())
		skip();
	in_btf = !velo_sockmap_btf_flag("BPF_F_PERMANENT", &value);
	if (in_btf && !velo_sockmap_flag_probe(value))
		expect_flag = value;
	memset(&features, 0xa5, sizeof(features));
	velo_sockmap_probe_uncached(&features);
	assert_int_equal(features.permanent_in_btf, in_btf);
	assert_int_equal(features.permanent_flag, expect_flag);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(btf_finds_ingress_flag),
		cmocka_unit_test(btf_misses_unknown_name),
		cmocka_unit_test(redirect_without_extra_flag_works),
		cmocka_unit_test(redirect_with_unknown_flag_is_eacces),
		cmocka_unit_test(probe_matches_btf_and_live_redirect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

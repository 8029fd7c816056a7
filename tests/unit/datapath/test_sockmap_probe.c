// SPDX-License-Identifier: Apache-2.0
/* The sockmap probes: BTF lookup of redirect flags by name, and the live redirect probe (root). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

/* The probe never reports a flag it didn't confirm. */
static void probe_reports_only_confirmed_flag(void **state)
{
	struct velo_sockmap_features features;

	(void)state;
	if (geteuid())
		skip();
	velo_sockmap_probe_uncached(&features);
	if (!features.permanent_in_btf)
		assert_int_equal(features.permanent_flag, 0);
	else if (features.permanent_flag)
		assert_int_equal(velo_sockmap_flag_probe(features.permanent_flag), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(btf_finds_ingress_flag),
		cmocka_unit_test(btf_misses_unknown_name),
		cmocka_unit_test(redirect_without_extra_flag_works),
		cmocka_unit_test(redirect_with_unknown_flag_is_eacces),
		cmocka_unit_test(probe_reports_only_confirmed_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

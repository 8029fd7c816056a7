// SPDX-License-Identifier: Apache-2.0
/* The sockmap probe cache: its key, strict fields, and a private file nobody else wrote. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "base/build_id.h"
#include "datapath/sockmap_cache.h"

static const struct sockmap_cache_key key = {
	.boot_id = "0b8a1c2d-0000-4000-8000-000000000001",
	.build_id = "b1ccf82d9ef4ac60dba5e1cd64c14d1c6c732ddb",
};

#define HEAD                                             \
	"boot_id=0b8a1c2d-0000-4000-8000-000000000001\n" \
	"build_id=b1ccf82d9ef4ac60dba5e1cd64c14d1c6c732ddb\n"

static int parse(const char *text, struct velo_sockmap_features *out, const char **why)
{
	return sockmap_cache_parse(text, &key, out, why);
}

static void valid_cache_is_read(void **state)
{
	struct velo_sockmap_features got;
	const char *why;

	(void)state;
	assert_int_equal(
		parse(HEAD "permanent_in_btf=1\npermanent_flag=10\nkernel_bugs=f\n", &got, &why),
		0);
	assert_true(got.permanent_in_btf);
	assert_int_equal(got.permanent_flag, 0x10);
	assert_int_equal(got.bugs, 0xf);
	assert_int_equal(
		parse(HEAD "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0\n", &got, &why), 0);
	assert_false(got.permanent_in_btf);
	assert_int_equal(got.bugs, 0);
}

/* Another boot, another build, or an older velo's format without build_id: probe again. */
static void other_key_is_stale(void **state)
{
	struct velo_sockmap_features got;
	const char *why;

	(void)state;
	assert_int_equal(parse("boot_id=0b8a1c2d-0000-4000-8000-000000000002\n"
			       "build_id=b1ccf82d9ef4ac60dba5e1cd64c14d1c6c732ddb\n"
			       "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0\n",
			       &got, &why),
			 -ESTALE);
	assert_int_equal(parse("boot_id=0b8a1c2d-0000-4000-8000-000000000001\n"
			       "build_id=00000000000000000000000000000000000000aa\n"
			       "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0\n",
			       &got, &why),
			 -ESTALE);
	assert_int_equal(parse("boot_id=0b8a1c2d-0000-4000-8000-000000000001\n"
			       "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0\n",
			       &got, &why),
			 -ESTALE);
}

static void fields_out_of_range_are_refused(void **state)
{
	static const char *const bad[] = {
		HEAD "permanent_in_btf=2\npermanent_flag=0\nkernel_bugs=0\n",
		HEAD "permanent_in_btf=1\npermanent_flag=3\nkernel_bugs=0\n",
		HEAD "permanent_in_btf=1\npermanent_flag=ffffffffffffffff\nkernel_bugs=0\n",
		HEAD "permanent_in_btf=1\npermanent_flag=10000000000000000\nkernel_bugs=0\n",
		HEAD "permanent_in_btf=0\npermanent_flag=10\nkernel_bugs=0\n",
		HEAD "permanent_in_btf=0\npermanent_flag=-1\nkernel_bugs=0\n",
		HEAD "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=10\n",
		HEAD "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0x0\n",
		HEAD "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=\n",
		HEAD "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0",
		HEAD "permanent_in_btf=0\npermanent_flag=0\nkernel_bugs=0\nextra=1\n",
		HEAD "permanent_flag=0\npermanent_in_btf=0\nkernel_bugs=0\n",
		HEAD,
	};
	struct velo_sockmap_features got;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (parse(bad[i], &got, &why) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(why);
		assert_int_equal(got.permanent_flag, 0);
		assert_int_equal(got.bugs, 0);
	}
}

static char dir[] = "/tmp/velotest-smcache-XXXXXX";
static char path[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/velotest-smcache-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/sockmap-probe", dir);
	return 0;
}

static int teardown(void **state)
{
	char other[PATH_MAX + 8];

	(void)state;
	unlink(path);
	snprintf(other, sizeof(other), "%s/target", dir);
	unlink(other);
	return rmdir(dir);
}

/* Written 0600 under any umask, read back; group- or world-writable, or a link: refused. */
static void file_is_private_and_checked(void **state)
{
	struct velo_sockmap_features in = { .permanent_in_btf = true, .bugs = 0x5 }, got;
	char target[PATH_MAX + 8];
	const char *why;
	struct stat st;
	mode_t saved;

	(void)state;
	saved = umask(0);
	assert_int_equal(sockmap_cache_write(dir, path, &key, &in), 0);
	umask(saved);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(sockmap_cache_read(path, &key, &got, &why), 0);
	assert_true(got.permanent_in_btf);
	assert_int_equal(got.bugs, 0x5);

	assert_int_equal(chmod(path, 0622), 0);
	assert_int_equal(sockmap_cache_read(path, &key, &got, &why), -EPERM);
	assert_string_equal(why, "writable by others");
	assert_int_equal(got.bugs, 0);
	assert_int_equal(chmod(path, 0600), 0);

	snprintf(target, sizeof(target), "%s/target", dir);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(sockmap_cache_read(path, &key, &got, &why), -EPERM);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(sockmap_cache_read(path, &key, &got, &why), -ENOENT);
}

/* Another owner than root or us: refused (needs root to hand the file away). */
static void file_of_another_user_is_refused(void **state)
{
	struct velo_sockmap_features in = { 0 }, got;
	const char *why;

	(void)state;
	if (geteuid())
		skip();
	assert_int_equal(sockmap_cache_write(dir, path, &key, &in), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(sockmap_cache_read(path, &key, &got, &why), -EPERM);
	assert_string_equal(why, "not owned by root");
}

/* This binary has a build id (gcc and ld give one) and it is stable within the process. */
static void build_id_is_hex_and_stable(void **state)
{
	char first[VELO_BUILD_ID_MAX], second[VELO_BUILD_ID_MAX];

	(void)state;
	assert_int_equal(velo_build_id(first, sizeof(first)), 0);
	assert_int_equal(velo_build_id(second, sizeof(second)), 0);
	assert_string_equal(first, second);
	assert_true(strlen(first) >= 16);
	assert_int_equal(velo_build_id(first, 4), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_cache_is_read),
		cmocka_unit_test(other_key_is_stale),
		cmocka_unit_test(fields_out_of_range_are_refused),
		cmocka_unit_test_setup_teardown(file_is_private_and_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(file_of_another_user_is_refused, setup, teardown),
		cmocka_unit_test(build_id_is_hex_and_stable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * Allocation files (/tmp/velotest-pool-*): a corrupt or foreign file is
 * refused and left as it is, a creation cut short is redone, a damaged slot
 * is never handed out.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipam/pool.h"

static char test_dir[] = "/tmp/velotest-pool-XXXXXX";
static char path[512];
static const struct pool_shape shape = { .family = AF_INET,
					 .start = { 10, 1, 0, 1 },
					 .n_slots = 4 };

static int remove_entry(const char *name, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(name);
}

static int setup(void **state)
{
	(void)state;
	strcpy(test_dir, "/tmp/velotest-pool-XXXXXX");
	if (!mkdtemp(test_dir))
		return -1;
	snprintf(path, sizeof(path), "%s/net/10.1.0.0_24", test_dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(test_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int open_pool(struct pool *pool, char *why)
{
	return pool_open(path, &shape, true, 100, pool, why, 128);
}

/* A fresh file with one lease, closed. */
static void make_file(void)
{
	struct pool pool;
	char why[128];
	uint32_t idx;

	assert_int_equal(open_pool(&pool, why), 0);
	assert_int_equal(pool_alloc(&pool, "c1", "eth0", NULL, NULL, &idx), 0);
	assert_int_equal(idx, 0);
	pool_close(&pool);
}

static void poke(off_t off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

static void test_missing_file_not_created_without_create(void **state)
{
	struct pool pool;
	char why[128];

	(void)state;
	assert_int_equal(pool_open(path, &shape, false, 100, &pool, why, sizeof(why)), -ENOENT);
	assert_int_equal(access(path, F_OK), -1);
}

static void test_bad_magic_is_refused_and_kept(void **state)
{
	struct pool pool;
	struct stat before, after;
	char why[128];

	(void)state;
	make_file();
	poke(0, "GARBAGE!", 8);
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(open_pool(&pool, why), -EBADMSG);
	assert_non_null(strstr(why, "magic"));
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_size, after.st_size);
}

static void test_truncated_file_is_refused(void **state)
{
	struct pool pool;
	char why[128];

	(void)state;
	make_file();
	assert_int_equal(truncate(path, 256 + 288), 0);
	assert_int_equal(open_pool(&pool, why), -EBADMSG);
	assert_non_null(strstr(why, "bytes"));
}

static void test_other_shape_is_stale(void **state)
{
	struct pool_shape other = shape;
	struct pool pool;
	char why[128];

	(void)state;
	make_file();
	other.n_slots = 5;
	assert_int_equal(pool_open(path, &other, true, 100, &pool, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "another range"));
}

/* A symlink, dangling or not, or a directory there is refused (-EBADMSG), never followed. */
static void test_symlink_and_directory_are_refused(void **state)
{
	char target[600], why[128];
	struct stat before, after;
	struct pool pool;

	(void)state;
	make_file();
	snprintf(target, sizeof(target), "%s/elsewhere", test_dir);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(stat(target, &before), 0);
	for (int create = 0; create <= 1; create++) {
		assert_int_equal(pool_open(path, &shape, create, 100, &pool, why, sizeof(why)),
				 -EBADMSG);
		assert_string_equal(why, "a symbolic link, not followed");
	}
	assert_int_equal(stat(target, &after), 0);
	assert_int_equal(before.st_mtime, after.st_mtime);
	assert_int_equal(unlink(target), 0);
	/* Dangling: there, not missing, and not created through. */
	assert_int_equal(pool_open(path, &shape, false, 100, &pool, why, sizeof(why)), -EBADMSG);
	assert_int_equal(pool_open(path, &shape, true, 100, &pool, why, sizeof(why)), -EBADMSG);
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(pool_open(path, &shape, false, 100, &pool, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "a directory");
}

static void test_cut_short_creation_is_redone(void **state)
{
	struct pool pool;
	char why[128];
	int fd;

	(void)state;
	/* Killed after its size was set, before its header: all zeros. */
	snprintf(why, sizeof(why), "%s/net", test_dir);
	assert_int_equal(mkdir(why, 0700), 0);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 256 + 4 * 288), 0);
	close(fd);
	assert_int_equal(open_pool(&pool, why), 0);
	assert_int_equal(pool.header->n_slots, 4);
	pool_close(&pool);
}

static void test_damaged_slot_is_never_handed_out(void **state)
{
	const uint8_t bad_state = 7;
	struct pool pool;
	char why[128];
	uint32_t idx;

	(void)state;
	make_file();
	poke(256 + 288, &bad_state, 1); /* slot 1 */
	assert_int_equal(open_pool(&pool, why), 0);
	assert_int_equal(pool_parse(pool.map, pool.len, true, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "slot 1"));
	assert_int_equal(pool_alloc(&pool, "c2", "eth0", NULL, NULL, &idx), 0);
	assert_int_equal(idx, 2);
	assert_false(pool_owned(&pool, 1, "", ""));
	pool_close(&pool);
}

static void test_parse_rejects_short_and_bad_cursor(void **state)
{
	struct pool_header header = { .magic = POOL_MAGIC, .version = POOL_VERSION };
	char why[128], buf[256 + 288] = { 0 };

	(void)state;
	assert_int_equal(pool_parse(buf, 10, true, why, sizeof(why)), -EBADMSG);
	header.slot_size = sizeof(struct pool_slot);
	header.family = AF_INET;
	header.n_slots = 1;
	header.next = 1;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &header, sizeof(header));
	assert_int_equal(pool_parse(buf, sizeof(buf), true, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "cursor"));
	((struct pool_header *)buf)->next = 0;
	assert_int_equal(pool_parse(buf, sizeof(buf), true, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_file_not_created_without_create, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic_is_refused_and_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_truncated_file_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_shape_is_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_and_directory_are_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cut_short_creation_is_redone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_slot_is_never_handed_out, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_parse_rejects_short_and_bad_cursor, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/* The sockmap probe cache file: keyed, strictly parsed, private. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_replace.h"
#include "base/lock.h"
#include "datapath/sockmap_cache.h"
#include "net/sockmap_bugs.h"

#define CACHE_TEXT_MAX 512 /* five short lines; anything longer is not ours */
#define BOOT_ID_LEN 36 /* 8-4-4-4-12 hex digits and dashes */

static int read_boot_id(char *buf, size_t len)
{
	FILE *file = fopen("/proc/sys/kernel/random/boot_id", "re");
	int ret = 0;

	if (!file)
		return -errno;
	if (!fgets(buf, (int)len, file))
		ret = -EIO;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(file);
	return ret;
}

int sockmap_cache_key(struct sockmap_cache_key *key)
{
	int ret = read_boot_id(key->boot_id, sizeof(key->boot_id));

	if (!ret && strlen(key->boot_id) != BOOT_ID_LEN)
		ret = -EIO;
	return ret ? ret : velo_build_id(key->build_id, sizeof(key->build_id));
}

/*
 * The value of "<name>=<value>\n" at *text into buf; moves *text past the
 * line. False when the line is not that, or its value empty or too long.
 */
static bool take_line(const char **text, const char *name, char *buf, size_t len)
{
	size_t name_len = strlen(name), value_len;
	const char *value, *end;

	if (strncmp(*text, name, name_len) || (*text)[name_len] != '=')
		return false;
	value = *text + name_len + 1;
	end = strchr(value, '\n');
	if (!end)
		return false;
	value_len = (size_t)(end - value);
	if (value_len == 0 || value_len >= len)
		return false;
	memcpy(buf, value, value_len);
	buf[value_len] = '\0';
	*text = end + 1;
	return true;
}

/* Lower-case hex of at most max_digits digits, nothing else. */
static bool parse_hex(const char *text, size_t max_digits, unsigned long long *out)
{
	size_t len = strlen(text);

	if (len == 0 || len > max_digits)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)text[i]) && (text[i] < 'a' || text[i] > 'f'))
			return false;
	*out = strtoull(text, NULL, 16);
	return true;
}

static int invalid(const char **why, const char *what)
{
	*why = what;
	return -EINVAL;
}

int sockmap_cache_parse(const char *text, const struct sockmap_cache_key *key,
			struct velo_sockmap_features *out, const char **why)
{
	char value[VELO_BUILD_ID_MAX];
	unsigned long long flag, bugs;
	bool in_btf;

	memset(out, 0, sizeof(*out));
	*why = "another boot's or build's";
	/* An older velo's cache has no build_id line: probe again, as for another build. */
	if (!take_line(&text, "boot_id", value, sizeof(value)) || strcmp(value, key->boot_id) ||
	    !take_line(&text, "build_id", value, sizeof(value)) || strcmp(value, key->build_id))
		return -ESTALE;
	if (!take_line(&text, "permanent_in_btf", value, sizeof(value)) ||
	    (strcmp(value, "0") && strcmp(value, "1")))
		return invalid(why, "permanent_in_btf is not 0 or 1");
	in_btf = value[0] == '1';
	if (!take_line(&text, "permanent_flag", value, sizeof(value)) ||
	    !parse_hex(value, 16, &flag))
		return invalid(why, "permanent_flag is not hex");
	/* The BTF lookup gives one enumerator's value: one bit, and only where BTF has it. */
	if (flag & (flag - 1))
		return invalid(why, "permanent_flag is more than one bit");
	if (flag && !in_btf)
		return invalid(why, "permanent_flag set without permanent_in_btf");
	if (!take_line(&text, "kernel_bugs", value, sizeof(value)) || !parse_hex(value, 8, &bugs))
		return invalid(why, "kernel_bugs is not hex");
	if (bugs & ~(unsigned long long)VELO_SM_BUGS_ALL)
		return invalid(why, "kernel_bugs has bits of no known bug");
	if (*text)
		return invalid(why, "text after kernel_bugs");
	out->permanent_in_btf = in_btf;
	out->permanent_flag = flag;
	out->bugs = (unsigned)bugs;
	*why = NULL;
	return 0;
}

/* Only root (or velo's own user) may have written it, and nobody else may change it. */
static int check_owner(int fd, const char **why)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return -EPERM;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		*why = "not owned by root";
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		*why = "writable by others";
		return -EPERM;
	}
	return 0;
}

int sockmap_cache_read(const char *path, const struct sockmap_cache_key *key,
		       struct velo_sockmap_features *out, const char **why)
{
	char text[CACHE_TEXT_MAX + 1];
	ssize_t n;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			*why = "a symbolic link";
		return errno == ELOOP ? -EPERM : -errno;
	}
	ret = check_owner(fd, why);
	if (!ret) {
		n = read(fd, text, sizeof(text));
		if (n < 0)
			ret = -errno;
		else if (n > CACHE_TEXT_MAX || memchr(text, '\0', (size_t)n))
			ret = invalid(why, "not a cache's text");
		else
			text[n] = '\0';
	}
	close(fd);
	return ret ? ret : sockmap_cache_parse(text, key, out, why);
}

int sockmap_cache_write(const char *dir, const char *path, const struct sockmap_cache_key *key,
			const struct velo_sockmap_features *features)
{
	char tmp[PATH_MAX], text[CACHE_TEXT_MAX];
	int ret, len;

	ret = lock_mkdirs(dir);
	if (ret)
		return ret;
	if (snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	len = snprintf(text, sizeof(text),
		       "boot_id=%s\nbuild_id=%s\npermanent_in_btf=%d\npermanent_flag=%llx\n"
		       "kernel_bugs=%x\n",
		       key->boot_id, key->build_id, features->permanent_in_btf,
		       (unsigned long long)features->permanent_flag, features->bugs);
	if (len < 0 || len >= (int)sizeof(text))
		return -ENAMETOOLONG;
	/* Concurrent probers write the same answer: a temp per writer, the rename makes the
	 * file whole either way. */
	return velo_file_replace(path, tmp, text, (size_t)len, 0600);
}

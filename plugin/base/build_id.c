// SPDX-License-Identifier: Apache-2.0
/* The running binary's build id, read from its own program headers: no file I/O. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/build_id.h"

struct build_id_walk {
	char *buf;
	size_t len;
	int ret;
};

/* Notes are 4-byte aligned in the segments a linker writes for them. */
static size_t note_align(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static int note_hex(const unsigned char *desc, size_t n, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	if (n == 0 || 2 * n + 1 > len)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = hex[desc[i] >> 4];
		buf[2 * i + 1] = hex[desc[i] & 0xf];
	}
	buf[2 * n] = '\0';
	return 0;
}

/* The first object dl_iterate_phdr reports is the executable itself. */
static int find_note(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_walk *walk = data;

	(void)size;
	for (ElfW(Half) p = 0; p < info->dlpi_phnum; p++) {
		const ElfW(Phdr) *phdr = &info->dlpi_phdr[p];
		const unsigned char *at, *end;

		if (phdr->p_type != PT_NOTE)
			continue;
		at = (const unsigned char *)(info->dlpi_addr + phdr->p_vaddr);
		end = at + phdr->p_memsz;
		while (at + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)(const void *)at;
			const unsigned char *name = at + sizeof(*note);
			const unsigned char *desc = name + note_align(note->n_namesz);

			if (desc + note->n_descsz > end)
				break;
			if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				walk->ret = note_hex(desc, note->n_descsz, walk->buf, walk->len);
				return 1;
			}
			at = desc + note_align(note->n_descsz);
		}
	}
	return 1; /* only the executable */
}

int velo_build_id(char *buf, size_t len)
{
	struct build_id_walk walk = { .buf = buf, .len = len, .ret = -ENOENT };
	struct stat st;
	int n;

	dl_iterate_phdr(find_note, &walk);
	if (walk.ret != -ENOENT)
		return walk.ret;
	if (stat("/proc/self/exe", &st))
		return -errno;
	n = snprintf(buf, len, "exe-%llx-%llx-%llx-%lld.%09ld", (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
		     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

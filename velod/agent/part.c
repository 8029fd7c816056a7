// SPDX-License-Identifier: Apache-2.0
/* What every part's hooks share (part.h): adding an fd to the loop's wait. */
#include "part.h"

void agent_poll_read(struct agent_poll *poll, int fd)
{
	if (fd < 0)
		return;
	FD_SET(fd, &poll->read);
	if (fd > poll->max_fd)
		poll->max_fd = fd;
}

uint64_t agent_earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

# SPDX-License-Identifier: Apache-2.0
# The socket short-circuit: the stream checker its node tests and benchmark drive.

SOCKMAP_STREAM := $(BUILD)/tests/sockmap_stream
TEST_BINS      += $(SOCKMAP_STREAM)

$(SOCKMAP_STREAM): tests/node/sockmap/sockmap_stream.c | $(BUILD)/tests
	$(CC) $(CFLAGS) -D_GNU_SOURCE -o $@ $<

# The node tests skip without it; `make test-node` builds it.
test-node: $(SOCKMAP_STREAM)

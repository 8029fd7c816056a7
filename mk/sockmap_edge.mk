# SPDX-License-Identifier: Apache-2.0
# The socket short-circuit's edge cases: the client/server tool that
# tests/node/sockmap/sockmap_edge.bats drives.

SOCKMAP_EDGE := $(BUILD)/tests/sockmap_edge
TEST_BINS    += $(SOCKMAP_EDGE)

$(SOCKMAP_EDGE): tests/node/sockmap/sockmap_edge.c | $(BUILD)/tests
	$(CC) $(CFLAGS) -D_GNU_SOURCE -o $@ $<

# The node tests skip without it; `make test-node` builds it.
test-node: $(SOCKMAP_EDGE)

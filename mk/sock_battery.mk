# SPDX-License-Identifier: Apache-2.0
# The socket semantics battery tests/node/sockmap/sock_battery.bats runs on every datapath.

SOCK_BATTERY := $(BUILD)/tests/sock_battery
TEST_BINS    += $(SOCK_BATTERY)

$(SOCK_BATTERY): tests/node/sockmap/sock_battery.c | $(BUILD)/tests
	$(CC) $(CFLAGS) -D_GNU_SOURCE -o $@ $<

# The node tests skip without it; `make test-node` builds it. The kernel matrix's guests run it.
test-node: $(SOCK_BATTERY)
kernel-matrix: $(SOCK_BATTERY)

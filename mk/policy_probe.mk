# SPDX-License-Identifier: Apache-2.0
# The NetworkPolicy truth table's echo servers and prober (tests/node/policy/policy_truth.bats).

POLICY_PROBE := $(BUILD)/tests/policy_probe
TEST_BINS    += $(POLICY_PROBE)

$(POLICY_PROBE): tests/node/policy/policy_probe.c | $(BUILD)/tests
	$(CC) $(CFLAGS) -D_GNU_SOURCE -o $@ $<

# The node tests skip the truth table without it; `make test-node` builds it. The kernel
# matrix's guests run it.
test-node: $(POLICY_PROBE)
kernel-matrix: $(POLICY_PROBE)

# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy's BPF_PROG_TEST_RUN test (tests/bpf/test_policy.c): libbpf and the skeleton only.

BPF_POLICY_BIN := $(BUILD)/tests/test_bpf_policy
TEST_BINS      += $(BPF_POLICY_BIN)

$(BPF_POLICY_BIN): tests/bpf/test_policy.c bpf/lib/velo_policy.h $(BPF_SKELS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LDFLAGS) \
		$(shell pkg-config --libs libbpf) -lelf -lz -lcmocka

# SPDX-License-Identifier: Apache-2.0
# The node uplink's XDP program (bpf/uplink_xdp.bpf.c): its BPF_PROG_TEST_RUN test. velod
# (velod/routing/uplink_xdp.c) and the skeleton build through the main Makefile's rules.

BPF_UPLINK_BIN := $(BUILD)/tests/test_bpf_uplink_xdp
TEST_BINS      += $(BPF_UPLINK_BIN)

# Needs only libbpf and the skeletons, not libvelo.
$(BPF_UPLINK_BIN): tests/bpf/test_uplink_xdp.c tests/bpf/fixtures.h bpf/lib/velo_shared.h bpf/lib/velo_uplink.h bpf/lib/velo_policy.h \
		$(BPF_SKELS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LDFLAGS) \
		$(shell pkg-config --libs libbpf) -lelf -lz -lcmocka

test-bpf: $(BPF_UPLINK_BIN)

# The uplink's tc program (bpf/uplink_tc.bpf.c, velod's crossNodeTc): its test, alike.
BPF_UPLINK_TC_BIN := $(BUILD)/tests/test_bpf_uplink_tc
TEST_BINS         += $(BPF_UPLINK_TC_BIN)

$(BPF_UPLINK_TC_BIN): tests/bpf/test_uplink_tc.c tests/bpf/fixtures.h bpf/lib/velo_shared.h bpf/lib/velo_cross.h \
		bpf/lib/velo_policy.h bpf/lib/velo_flow.h $(BPF_SKELS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LDFLAGS) \
		$(shell pkg-config --libs libbpf) -lelf -lz -lcmocka

test-bpf: $(BPF_UPLINK_TC_BIN)

# SPDX-License-Identifier: Apache-2.0
# Service translation's map writer against real BPF maps (root; skips otherwise).

SVC_MAPS_BIN := $(BUILD)/tests/test_bpf_svc_maps
TEST_BINS    += $(SVC_MAPS_BIN)

$(SVC_MAPS_BIN): tests/bpf/test_svc_maps.c bpf/lib/velo_svc.h $(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS) \
		-lcmocka

test-bpf: $(SVC_MAPS_BIN)

# SPDX-License-Identifier: Apache-2.0
# velo's BPF part: the BPF_PROG_TEST_RUN tests and regenerating bpf/include/vmlinux.h.

BPF_TEST_BIN := $(BUILD)/tests/test_bpf_prog_run
BPF_DENY_BIN := $(BUILD)/tests/test_bpf_tc_deny
TEST_BINS    += $(BPF_TEST_BIN) $(BPF_DENY_BIN)

.PHONY: test-bpf vmlinux

# Needs only libbpf and the skeletons, not libvelo.
$(BPF_TEST_BIN): tests/bpf/test_prog_run.c tests/bpf/fixtures.h bpf/lib/velo_shared.h $(BPF_SKELS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LDFLAGS) \
		$(shell pkg-config --libs libbpf) -lelf -lz -lcmocka

$(BPF_DENY_BIN): tests/bpf/test_tc_deny.c bpf/lib/velo_shared.h $(BPF_SKELS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ibpf $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LDFLAGS) \
		$(shell pkg-config --libs libbpf) -lelf -lz -lcmocka

test-bpf: $(BPF_TEST_BIN) $(BPF_DENY_BIN) ## BPF program tests (BPF_PROG_TEST_RUN; root, else they skip)
	tests/run.sh bpf

# The checked-in bpf/include/vmlinux.h comes from a BTF kernel; run this on one to refresh it.
vmlinux: ## regenerate bpf/include/vmlinux.h from this machine's kernel BTF
	{ printf '/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */\n'; \
	  printf '/*\n * Generated, do not edit: kernel types for CO-RE, from a %s kernel by\n' \
		"$$(uname -r | cut -d. -f1,2)"; \
	  printf ' *   bpftool btf dump file /sys/kernel/btf/vmlinux format c\n'; \
	  printf ' * (make vmlinux regenerates it). Checked in so that velo builds on machines\n'; \
	  printf ' * whose kernel has no BTF; CO-RE relocates field offsets at load time.\n */\n'; \
	  $(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c; } > bpf/include/vmlinux.h.tmp
	mv bpf/include/vmlinux.h.tmp bpf/include/vmlinux.h

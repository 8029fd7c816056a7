# SPDX-License-Identifier: Apache-2.0
# The next release in the upgrade tests (tests/node/*/*_upgrade.bats, fastpath.bats): velo and
# velod whose BPF generation (mk/bpf_gen.mk) is "nextgen".
NEXTGEN_LOADER := $(OBJ)/nextgen/generation.o
NEXTGEN_BINS   := $(BUILD)/tests/velo-nextgen $(BUILD)/tests/velod-nextgen
TEST_BINS      += $(NEXTGEN_BINS)

$(NEXTGEN_LOADER): plugin/datapath/generation.c $(wildcard plugin/*/*.h) $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DVELO_BPF_GEN_OVERRIDE='"nextgen"' $(CFLAGS) -c $< -o $@

# The generation's object comes before libvelo.a, so the archive's copy is never pulled in.
$(BUILD)/tests/velo-nextgen: $(OBJ)/plugin/main.o $(NEXTGEN_LOADER) $(LIB) | $(BUILD)/tests
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/velod-nextgen: $(AGENT_SRCS:%.c=$(OBJ)/%.o) $(NEXTGEN_LOADER) \
		$(LIB) | $(BUILD)/tests
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(AGENT_LDLIBS)

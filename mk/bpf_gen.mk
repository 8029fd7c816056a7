# SPDX-License-Identifier: Apache-2.0
# The fast path's BPF generation (plugin/bpf_loader.h): a hash of its objects, so that a velo
# whose programs differ pins them beside an older velo's and velod moves pods over. Debug info
# gets the build directory mapped away, so the same sources make the same generation anywhere.

BPF_CFLAGS += -fdebug-prefix-map=$(CURDIR)=.
VETH_GROUP_OBJS := $(BUILD)/bpf/veth_tc.bpf.o $(BUILD)/bpf/veth_xdp.bpf.o

$(BUILD)/velo_bpf_gen.h: $(VETH_GROUP_OBJS)
	printf '#define VELO_BPF_GEN "%s"\n' "$$(cat $^ | sha256sum | cut -c1-12)" >$@.tmp
	mv $@.tmp $@

$(OBJ)/plugin/bpf_loader.o: $(BUILD)/velo_bpf_gen.h

# SPDX-License-Identifier: Apache-2.0
# The BPF generation (plugin/datapath/generation.c): one hash over the objects whose programs are pinned
# per generation (the fast path's, the per-pod cgroup and the sockmap ones), so that a velo whose
# programs differ pins them beside an older velo's and velod moves pods over. Debug info gets the
# build directory mapped away, so the same sources make the same generation anywhere.

BPF_CFLAGS += -fdebug-prefix-map=$(CURDIR)=.
GEN_GROUP_OBJS := $(BUILD)/bpf/veth_tc.bpf.o $(BUILD)/bpf/veth_xdp.bpf.o \
	$(BUILD)/bpf/cgroup_skb.bpf.o $(BUILD)/bpf/cgroup_sock.bpf.o \
	$(BUILD)/bpf/sockmap.bpf.o $(BUILD)/bpf/cgroup_sock_addr.bpf.o

$(BUILD)/velo_bpf_gen.h: $(GEN_GROUP_OBJS)
	printf '#define VELO_BPF_GEN "%s"\n' "$$(cat $^ | sha256sum | cut -c1-12)" >$@.tmp
	mv $@.tmp $@

$(OBJ)/plugin/datapath/generation.o: $(BUILD)/velo_bpf_gen.h

# SPDX-License-Identifier: Apache-2.0
# bench/svc_sync.sh's driver: velod's services sync (parse, table, map writes) timed on
# unpinned maps of the pinned maps' sizes; `make bench` builds it.

SVC_SYNC := $(BUILD)/bench/svc_sync

$(SVC_SYNC): bench/svc_sync.c bpf/lib/velo_svc.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

bench: $(SVC_SYNC)

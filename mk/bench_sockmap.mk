# SPDX-License-Identifier: Apache-2.0
# bench/sockmap.sh's request/response and connection-rate tool. The script also drives the
# stream tool that mk/sockmap.mk builds for the node tests; `make bench` builds both.

SM_RR := $(BUILD)/bench/sm_rr

$(SM_RR): bench/sm_rr.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -D_GNU_SOURCE -o $@ $<

bench: $(SM_RR) $(BUILD)/tests/sockmap_stream

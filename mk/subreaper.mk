# SPDX-License-Identifier: Apache-2.0
# The subreaper harness tests/node/cni/reap.bats runs velo's DEL under (a runtime that sets
# PR_SET_CHILD_SUBREAPER and waits for its own child only).

SUBREAPER_RUN := $(BUILD)/tests/subreaper_run
TEST_BINS     += $(SUBREAPER_RUN)

$(SUBREAPER_RUN): tests/node/cni/subreaper_run.c | $(BUILD)/tests
	$(CC) $(CFLAGS) -D_GNU_SOURCE -o $@ $<

# The node tests skip without it; `make test-node` builds it.
test-node: $(SUBREAPER_RUN)

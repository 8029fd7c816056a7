# SPDX-License-Identifier: Apache-2.0
# The long versions of the reliability tests (docs/reliability.md lists what each runs and
# how long it takes on a 2-core machine). Root. The default suite runs the short versions.
#   make stress                        all of them (~45 min)
#   make stress-crash stress-churn stress-fuzz   one at a time

STRESS_CRASH_TRIALS ?= 150
STRESS_CHURN_PODS   ?= 200
STRESS_FUZZ_SECONDS ?= 300

.PHONY: stress stress-crash stress-churn stress-fuzz

stress: stress-crash stress-churn stress-fuzz ## long crash, churn and fuzz runs (root; ~45 min)

stress-crash: $(BUILD)/velo ## kill -9 during ADD, STRESS_CRASH_TRIALS per cleanup kind (~3-8 min)
	VELO_BIN=$(abspath $(BUILD)/velo) VELOTEST_CRASH_TRIALS=$(STRESS_CRASH_TRIALS) \
		bats --tap tests/node/reliability/crash.bats

stress-churn: $(BUILD)/velo ## 4 workers x STRESS_CHURN_PODS pods (~4 min)
	VELO_BIN=$(abspath $(BUILD)/velo) VELOTEST_CHURN_PODS=$(STRESS_CHURN_PODS) \
		bats --tap tests/node/reliability/churn.bats

stress-fuzz: fuzz-build ## every parser fuzzed STRESS_FUZZ_SECONDS (7 parsers: ~35 min)
	tests/fuzz/run.sh $(FUZZ_DIR) $(STRESS_FUZZ_SECONDS)

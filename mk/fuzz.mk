# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets for every parser of outside input (tests/fuzz/fuzz_<parser>.c).
# The plugin's sources are compiled again with clang and coverage into $(FUZZ_DIR):
# libFuzzer needs clang, the normal build may use gcc.
#   make fuzz FUZZ_SECONDS=60    fuzz each target for that long, report execs and findings
#   make fuzz-build              just build them (tests/fuzz/fuzz.bats uses them)

FUZZ_DIR      := $(BUILD)/fuzz
FUZZ_SECONDS  ?= 60
FUZZ_SAN      := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS   := -std=gnu11 -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -Wall -Wextra -Wshadow \
	-Wno-unused-command-line-argument
FUZZ_CPPFLAGS := -D_GNU_SOURCE -Iplugin -I. -I$(BUILD) \
	$(shell pkg-config --cflags libnl-route-3.0 libcjson libbpf libcurl)
FUZZ_LIB_OBJS := $(LIB_SRCS:plugin/%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_LIB      := $(FUZZ_DIR)/libvelo-fuzz.a
FUZZ_BINS     := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_DIR)/%)

.PHONY: fuzz fuzz-build

# Plugin code: warnings shown but not fatal here (the gcc build is the one held to -Werror).
$(FUZZ_DIR)/obj/%.o: plugin/%.c $(wildcard plugin/*/*.h) | $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_LIB)
	$(CLANG) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -Werror -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) \
		$(LDLIBS)

fuzz-build: $(FUZZ_BINS) ## build the libFuzzer targets (clang) into $(BUILD)/fuzz

fuzz: fuzz-build ## fuzz every parser for FUZZ_SECONDS each (default 60); prints execs and findings
	tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

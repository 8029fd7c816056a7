# SPDX-License-Identifier: Apache-2.0
# velo: one plain Makefile for the plugin, the CLI, the agent, the BPF objects and the tests.

PREFIX      ?= /usr/local
DESTDIR     ?=
CNI_BIN_DIR ?= /opt/cni/bin
BUILD       ?= build
CC          ?= gcc
CLANG       ?= clang
BPFTOOL     ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
# make SAN=address,undefined: build everything with sanitizers.
SAN         ?=

PKGS     := libnl-route-3.0 libcjson libbpf
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wmissing-prototypes
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -fstack-protector-strong
CPPFLAGS += -D_FORTIFY_SOURCE=2 -D_GNU_SOURCE -Iplugin -I. -I$(BUILD) $(shell pkg-config --cflags $(PKGS))
# libbpf, libnl, libelf and zlib are linked statically: a CNI plugin is exec'd for every
# pod, and resolving fewer shared libraries shortens every invocation.
LDLIBS   += -Wl,-Bstatic -lbpf -lnl-route-3 -lnl-3 -lelf -lz -Wl,-Bdynamic -lcjson -lpthread -lm
ifneq ($(SAN),)
CFLAGS   += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SAN)
endif

# The plugin's own files except its main() form libvelo.a, shared by velo, veloctl, velod and tests.
LIB_SRCS   := $(wildcard plugin/*/*.c)
OBJ        := $(BUILD)/obj
LIB_OBJS   := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIB        := $(BUILD)/libvelo.a
CTL_SRCS   := $(wildcard veloctl/*.c)
AGENT_SRCS := $(wildcard velod/*.c velod/*/*.c)
BINS       := $(BUILD)/velo $(if $(CTL_SRCS),$(BUILD)/veloctl) $(if $(AGENT_SRCS),$(BUILD)/velod)

# BPF: bpf/<attach point>.bpf.c -> object -> skeleton header embedded in the binaries.
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
BPF_SKELS  := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -Ibpf -Ibpf/include -I$(BUILD)

# Unit tests mirror the code they test: tests/unit/<folder>/test_<file>.c; binaries in $(BUILD)/tests/.
UNIT_SRCS  := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS  := $(addprefix $(BUILD)/tests/,$(notdir $(UNIT_SRCS:.c=)))
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
# Test binaries every suite needs; mk/*.mk files add theirs.
TEST_BINS  := $(UNIT_BINS)

-include $(wildcard mk/*.mk)

.PHONY: all test test-unit test-node test-clients install uninstall lint format check-format \
	clean help bench demo deps fuzz
.DEFAULT_GOAL := all

all: $(BINS) ## build velo, veloctl and velod

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h bpf/lib/*.h bpf/include/*.h) | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp && mv $@.tmp $@

# Objects live under $(OBJ)/<source dir>/, apart from the binaries of the same names.
$(OBJ)/%.o: %.c $(wildcard plugin/*/*.h veloctl/*.h velod/*/*.h) $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/velo: $(OBJ)/plugin/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/veloctl: $(CTL_SRCS:%.c=$(OBJ)/%.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/velod: $(AGENT_SRCS:%.c=$(OBJ)/%.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(AGENT_LDLIBS)

# The library's unit tests link libvelo.a alone; velod's and veloctl's (tests/unit/velod/,
# tests/unit/veloctl/) are in mk/velod_k8s.mk and mk/flows.mk.
define unit_test_rule
$(BUILD)/tests/$(notdir $(1:.c=)): $(1) $(LIB) | $(BUILD)/tests
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) -Wno-missing-prototypes -o $$@ $$< $$(LIB) $$(LDFLAGS) $$(LDLIBS) -lcmocka
endef
$(foreach src,$(filter-out tests/unit/velod/% tests/unit/veloctl/%,$(UNIT_SRCS)),$(eval $(call unit_test_rule,$(src))))

$(BUILD) $(BUILD)/bpf $(BUILD)/tests:
	mkdir -p $@

test: all $(TEST_BINS) ## run the whole suite (unit, BPF, node, real clients); needs root for most
	tests/run.sh

test-unit: $(UNIT_BINS) ## unit tests only (no root)
	tests/run.sh unit

test-node: all ## node tests only (root)
	tests/run.sh node

install: all ## install velo to $(DESTDIR)$(CNI_BIN_DIR), the rest to $(DESTDIR)$(PREFIX)/bin
	install -d $(DESTDIR)$(CNI_BIN_DIR) $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/velo $(DESTDIR)$(CNI_BIN_DIR)/velo
	$(if $(CTL_SRCS),install -m 0755 $(BUILD)/veloctl $(DESTDIR)$(PREFIX)/bin/veloctl)
	$(if $(AGENT_SRCS),install -m 0755 $(BUILD)/velod $(DESTDIR)$(PREFIX)/bin/velod)

uninstall: ## remove what install put in place
	rm -f $(DESTDIR)$(CNI_BIN_DIR)/velo $(DESTDIR)$(PREFIX)/bin/veloctl $(DESTDIR)$(PREFIX)/bin/velod

C_FILES  = $(wildcard plugin/*.[ch] plugin/*/*.[ch] veloctl/*.[ch] velod/*.[ch] velod/*/*.[ch] bpf/*.c bpf/*.h bpf/lib/*.h \
	tests/unit/*/*.c tests/bpf/*.c tests/fuzz/*.c bench/*.c)
SH_FILES = $(wildcard hack/*.sh tests/*.sh tests/*/*.sh bench/*.sh e2e/*.sh e2e/*/*.sh .ci/run)

lint: all ## the layout rule, clang-tidy, cppcheck, shellcheck
	hack/check-layout.sh
	hack/check-bats.sh
	clang-tidy --quiet $(LIB_SRCS) plugin/main.c $(CTL_SRCS) $(AGENT_SRCS) -- $(CPPFLAGS) -Ivelod -std=gnu11
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--suppress=missingIncludeSystem --suppress=unknownMacro --inline-suppr -Iplugin -I. $(LIB_SRCS) plugin/main.c
	shellcheck -x $(SH_FILES)

format: ## reformat the C sources with clang-format
	clang-format -i $(C_FILES)

check-format: ## fail if any C source needs reformatting
	clang-format --dry-run --Werror $(C_FILES)

bench: all ## CNI and datapath benchmarks (root; not part of the tests)
	bench/run.sh

demo: all ## velo's main job on this machine: a node, pods, traffic, numbers (root)
	hack/demo.sh

deps: ## install the Debian packages the build and tests need (root)
	hack/install-deps.sh

clean: ## remove build output
	rm -rf $(BUILD)

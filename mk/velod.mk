# SPDX-License-Identifier: Apache-2.0
# veloctl and velod: the agent's HTTP library, the version they report.
# Debian packages: libmicrohttpd-dev, libnftables-dev (hack/install-deps.sh).

VELO_VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
MHD_CFLAGS   := $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
MHD_LIBS     := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)

$(OBJ)/velod/%.o: CPPFLAGS += -Ivelod $(MHD_CFLAGS) -DVELO_VERSION='"$(VELO_VERSION)"'
$(OBJ)/veloctl/%.o: CPPFLAGS += -DVELO_VERSION='"$(VELO_VERSION)"'
AGENT_LDLIBS += $(MHD_LIBS) $(shell pkg-config --libs libnftables 2>/dev/null || echo -lnftables)

# velod's config file: the loader, a key's value reader, its keys' table (docs/velod.md's reference is printed from it:
# `make docs`), the reference's printer. Unit tests of the config link these.
VELOD_CONFIG_OBJS := $(OBJ)/velod/agent/config.o $(OBJ)/velod/agent/config_field.o \
		     $(OBJ)/velod/agent/config_fields.o \
		     $(OBJ)/velod/agent/config_doc.o

.PHONY: docs
docs: $(BUILD)/velod ## rewrite docs/velod.md's config reference from velod's key table
	hack/velod-config-doc.sh $(BUILD)/velod docs/velod.md

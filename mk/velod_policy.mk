# SPDX-License-Identifier: Apache-2.0
# tests/unit/velod/test_agent_config.c: velod's config file (velod/agent/config.c) on its own, its
# NetworkPolicy keys among them. The unit tests' rule links libvelo.a only; this one adds
# velod's config objects (named for what it tests: tests/unit/cni/test_config.c has the plugin's).
$(BUILD)/tests/test_agent_config: tests/unit/velod/test_agent_config.c $(VELOD_CONFIG_OBJS) $(LIB) \
		| $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(VELOD_CONFIG_OBJS) $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# SPDX-License-Identifier: Apache-2.0
# tests/unit/velod/test_routing.c: the routing seam's backend table and selection
# (velod/routing/routing.c). The table names each backend's object, so the test links every velod
# object but main.o, with velod's own libraries.
ROUTING_TEST_OBJS := $(filter-out $(OBJ)/velod/main.o,$(AGENT_SRCS:%.c=$(OBJ)/%.o))

$(BUILD)/tests/test_routing: tests/unit/velod/test_routing.c $(ROUTING_TEST_OBJS) $(LIB) \
		| $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(ROUTING_TEST_OBJS) $(LIB) $(LDFLAGS) $(LDLIBS) $(AGENT_LDLIBS) -lcmocka

# SPDX-License-Identifier: Apache-2.0
# tests/unit/velod/test_k8s_node_list.c: velod's Node parsing (velod/k8s/k8s_node_list.c) on its own. The unit
# tests' rule links libvelo.a only; this one adds the velod objects and velo_monotonic_ns's.
K8S_NODES_TEST_OBJS := $(OBJ)/velod/k8s/k8s_event.o \
	$(OBJ)/velod/k8s/k8s_node_list.o

$(BUILD)/tests/test_k8s_node_list: tests/unit/velod/test_k8s_node_list.c $(K8S_NODES_TEST_OBJS) $(LIB) \
		| $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(K8S_NODES_TEST_OBJS) $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# tests/unit/velod/test_k8s_event.c: a watch stream's line for any resource (velod/k8s/k8s_event.c).
$(BUILD)/tests/test_k8s_event: tests/unit/velod/test_k8s_event.c $(OBJ)/velod/k8s/k8s_event.o $(LIB) \
		| $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/k8s/k8s_event.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# tests/unit/velod/test_k8s_services.c: the Service and EndpointSlice watches' state and table
# (velod/k8s/k8s_services.c), with the watch thread (k8s_watch.c) replaced by the test's stand-in.
$(BUILD)/tests/test_k8s_services: tests/unit/velod/test_k8s_services.c $(OBJ)/velod/k8s/k8s_services.o \
		$(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/k8s/k8s_services.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# tests/unit/velod/test_k8s_servicecidrs.c: the ServiceCIDR watch's ranges
# (velod/k8s/k8s_servicecidrs.c), with the watch thread (k8s_watch.c) replaced by the test's stand-in.
$(BUILD)/tests/test_k8s_servicecidrs: tests/unit/velod/test_k8s_servicecidrs.c \
		$(OBJ)/velod/k8s/k8s_servicecidrs.o $(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/k8s/k8s_servicecidrs.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

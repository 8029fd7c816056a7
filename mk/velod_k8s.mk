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

# The watch set's tests link a stand-in for the watch thread (velod/k8s/k8s_watch.c) that keeps the
# callbacks a set gives its watches (tests/unit/velod/k8s_watch_standin.c), and velod/k8s/k8s_watch_set.c.
# tests/unit/velod/test_k8s_watch_set.c: the set itself, with a toy resource set.
# tests/unit/velod/test_k8s_services.c: the Service and EndpointSlice set and its table.
# tests/unit/velod/test_k8s_servicecidrs.c: the ServiceCIDR set's ranges.
K8S_SET_TESTS := $(addprefix $(BUILD)/tests/,test_k8s_watch_set test_k8s_services test_k8s_servicecidrs)
K8S_SET_TEST_OBJS := $(OBJ)/velod/k8s/k8s_watch_set.o $(OBJ)/tests/unit/velod/k8s_watch_standin.o
$(OBJ)/tests/unit/velod/k8s_watch_standin.o: CPPFLAGS += -Ivelod
$(BUILD)/tests/test_k8s_services: $(OBJ)/velod/k8s/k8s_services.o
$(BUILD)/tests/test_k8s_servicecidrs: $(OBJ)/velod/k8s/k8s_servicecidrs.o
$(K8S_SET_TESTS): $(BUILD)/tests/%: tests/unit/velod/%.c $(K8S_SET_TEST_OBJS) $(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod -Itests/unit/velod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(filter %.o,$^) $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

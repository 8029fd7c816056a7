# SPDX-License-Identifier: Apache-2.0
# Flow events' unit tests outside libvelo.a: velod's bounded series (velod/flows/flows_series.c), its
# TCP sockets' sides (velod/flows/flows_socks.c) and veloctl observe's filters (veloctl/flow_filter.c),
# each linked with its one object.
$(BUILD)/tests/test_flows_series: tests/unit/velod/test_flows_series.c $(OBJ)/velod/flows/flows_series.o \
		$(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/flows/flows_series.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

$(BUILD)/tests/test_flows_socks: tests/unit/velod/test_flows_socks.c $(OBJ)/velod/flows/flows_socks.o \
		$(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/flows/flows_socks.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

$(BUILD)/tests/test_flow_filter: tests/unit/veloctl/test_flow_filter.c $(OBJ)/veloctl/flow_filter.o \
		$(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Iveloctl $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/veloctl/flow_filter.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

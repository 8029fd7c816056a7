# SPDX-License-Identifier: Apache-2.0
# tests/unit/velod/test_local_socket.c: velod's local socket (velod/agent/local_socket.c) and the config
# keys that place it (velod/agent/config.c), linked with those objects.
$(BUILD)/tests/test_local_socket: tests/unit/velod/test_local_socket.c \
		$(OBJ)/velod/agent/local_socket.o $(VELOD_CONFIG_OBJS) $(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/agent/local_socket.o $(VELOD_CONFIG_OBJS) $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

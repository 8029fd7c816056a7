# SPDX-License-Identifier: Apache-2.0
# tests/unit/velod/test_part.c: velod's parts started and stopped in table order
# (velod/agent/part.c), with fake parts, linked with that one object.
$(BUILD)/tests/test_part: tests/unit/velod/test_part.c $(OBJ)/velod/agent/part.o $(LIB) \
		| $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(MHD_CFLAGS) $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/agent/part.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

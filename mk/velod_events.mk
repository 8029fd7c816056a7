# SPDX-License-Identifier: Apache-2.0
# tests/unit/velod/test_k8s_event_body.c: the Events velod posts (velod/k8s/k8s_event_body.c), on their
# own: no API, no thread.
$(BUILD)/tests/test_k8s_event_body: tests/unit/velod/test_k8s_event_body.c \
		$(OBJ)/velod/k8s/k8s_event_body.o $(LIB) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Ivelod $(CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(OBJ)/velod/k8s/k8s_event_body.o $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# SPDX-License-Identifier: Apache-2.0
# The Kubernetes API client (plugin/k8s_api.c) reads pods' annotations with libcurl.

CPPFLAGS += $(shell pkg-config --cflags libcurl)
LDLIBS   += $(shell pkg-config --libs libcurl)

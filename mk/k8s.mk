# SPDX-License-Identifier: Apache-2.0
# The Kubernetes API client (plugin/k8s/k8s_api.c) reads pods' annotations with libcurl,
# which plugin/k8s/curl_lazy.c loads with dlopen on first use: only its headers at build time.

CPPFLAGS += $(shell pkg-config --cflags libcurl)

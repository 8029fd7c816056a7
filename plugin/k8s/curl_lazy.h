/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl, loaded on first use. Linking it pulls in TLS, Kerberos, LDAP and
 * more: ~30 libraries whose loading cost every CNI invocation several
 * milliseconds, although only the rare Kubernetes API lookup needs them.
 */
#ifndef VELO_K8S_CURL_LAZY_H
#define VELO_K8S_CURL_LAZY_H

#define CURL_DISABLE_TYPECHECK /* the typecheck macros would shadow the pointers below */
#include <curl/curl.h>

struct curl_api {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *text);
	void (*slist_free_all)(struct curl_slist *list);
};

/* The loaded API; NULL with errno = ENOENT when libcurl isn't installed. */
const struct curl_api *curl_api_get(void);

#endif

// SPDX-License-Identifier: Apache-2.0
/* Loads libcurl with dlopen the first time the Kubernetes API is asked. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#include "base/log.h"
#include "k8s/curl_lazy.h"

static struct curl_api api;

static bool resolve(void *lib, void **slot, const char *name)
{
	*slot = dlsym(lib, name);
	if (!*slot)
		pr_err("libcurl: no symbol %s", name);
	return *slot != NULL;
}

const struct curl_api *curl_api_get(void)
{
	static bool loaded;
	void *lib;

	if (loaded)
		return &api;
	lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		pr_err("libcurl: %s", dlerror());
		errno = ENOENT;
		return NULL;
	}
	if (!resolve(lib, (void **)&api.global_init, "curl_global_init") ||
	    !resolve(lib, (void **)&api.easy_init, "curl_easy_init") ||
	    !resolve(lib, (void **)&api.easy_setopt, "curl_easy_setopt") ||
	    !resolve(lib, (void **)&api.easy_perform, "curl_easy_perform") ||
	    !resolve(lib, (void **)&api.easy_getinfo, "curl_easy_getinfo") ||
	    !resolve(lib, (void **)&api.easy_cleanup, "curl_easy_cleanup") ||
	    !resolve(lib, (void **)&api.easy_strerror, "curl_easy_strerror") ||
	    !resolve(lib, (void **)&api.slist_append, "curl_slist_append") ||
	    !resolve(lib, (void **)&api.slist_free_all, "curl_slist_free_all")) {
		dlclose(lib);
		errno = ENOENT;
		return NULL;
	}
	loaded = true;
	return &api;
}

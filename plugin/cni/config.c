// SPDX-License-Identifier: Apache-2.0
/*
 * The network configuration from stdin: every field velo reads is type
 * checked, and a failure names the field. Fields velo doesn't know are left
 * alone: chained plugins and runtimes put their own there.
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "cni/config.h"
#include "cni/config_field.h"

#define STDIN_MAX (1u << 20) /* configs are a few KiB; a runaway writer must not eat memory */

#define DEFAULT_VETH_PREFIX "velo"
#define DEFAULT_STATE_DIR "/var/lib/velo"
#define DEFAULT_RUN_DIR "/run/velo"
#define DEFAULT_BPFFS_DIR "/sys/fs/bpf/velo"
#define DEFAULT_LOG_FILE "/var/log/velo/cni.log"
#define DEFAULT_LOG_MAX_BYTES (10ul << 20)
#define DEFAULT_LOCK_TIMEOUT_MS 10000
#define LOCK_TIMEOUT_MS_MAX 600000
#define SOCKMAP_PROBE_TIMEOUT_MS_MAX 10000 /* well below any runtime's CNI timeout */
#define MTU_MIN 68 /* the IPv4 minimum */
#define MTU_MAX 65535
#define LOG_MAX_BYTES_MAX (1ul << 40)

#define POD_ANNOTATIONS_KEY "io.kubernetes.cri.pod-annotations"
#define CGROUP_PATH_KEY "cgroupPath"
#define BANDWIDTH_KEY "bandwidth"

char *velo_read_stdin(void)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *grown;
	ssize_t n;

	if (!buf)
		return NULL;
	for (;;) {
		if (len + 1 == cap) {
			if (cap > STDIN_MAX) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = grown;
			cap *= 2;
		}
		n = read(STDIN_FILENO, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			free(buf);
			errno = err;
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > STDIN_MAX || memchr(buf, '\0', len)) {
		free(buf);
		errno = len > STDIN_MAX ? EFBIG : EINVAL;
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static int parse_version(const cJSON *root, struct velo_config *config)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "cniVersion");
	char supported[64] = "";

	if (!item)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "cniVersion: required");
	if (!cJSON_IsString(item) || !item->valuestring)
		return config_invalid("cniVersion", "a string", item);
	config->version_str = item->valuestring;
	config->version = cni_version_parse(item->valuestring);
	if (config->version >= CNI_V_OLDEST_ACCEPTED)
		return 0;
	for (unsigned i = 0; i < cni_supported_versions_len; i++) {
		size_t len = strlen(supported);

		snprintf(supported + len, sizeof(supported) - len, "%s%s", i ? ", " : "",
			 cni_version_str(cni_supported_versions[i]));
	}
	return cni_fail(-EINVAL, CNI_ERR_INCOMPATIBLE_VERSION,
			"cniVersion \"%.32s\" is not supported; velo supports %s",
			item->valuestring, supported);
}

/* [A-Za-z0-9][A-Za-z0-9_.-]*, as the spec asks of network names. */
static int parse_name(const cJSON *root, struct velo_config *config)
{
	const char *name;
	int ret = config_get_string(root, "name", &name);

	if (ret)
		return ret;
	if (!name)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "name: required");
	if (!isalnum((unsigned char)name[0]))
		goto bad;
	for (const char *p = name + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '-')
			goto bad;
	return config_copy_string("name", name, config->name, sizeof(config->name));
bad:
	return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
			"name \"%.128s\": expected a letter or digit, then letters, digits, _ . -",
			name);
}

static int parse_type(const cJSON *root)
{
	const char *type;
	int ret = config_get_string(root, "type", &type);

	if (ret)
		return ret;
	if (!type || !type[0])
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "type: required");
	return 0;
}

/* ipam.type is run from CNI_PATH: a bare file name, never a path. */
static int parse_ipam(const cJSON *root, struct velo_config *config)
{
	const cJSON *ipam = cJSON_GetObjectItemCaseSensitive(root, "ipam");
	const char *type;
	int ret;

	if (!ipam)
		return 0;
	if (!cJSON_IsObject(ipam))
		return config_invalid("ipam", "an object", ipam);
	ret = config_get_string(ipam, "type", &type);
	if (ret)
		return ret;
	if (!type || !type[0])
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG, "ipam.type: required");
	if (strchr(type, '/') || !strcmp(type, ".") || !strcmp(type, ".."))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"ipam.type \"%.64s\": expected a plugin name, not a path", type);
	ret = config_copy_string("ipam.type", type, config->ipam_type, sizeof(config->ipam_type));
	if (ret)
		return ret;
	config->ipam = ipam;
	return 0;
}

static int parse_veth_prefix(const cJSON *root, struct velo_config *config)
{
	const char *prefix;
	int ret = config_get_string(root, "vethPrefix", &prefix);

	if (ret || !prefix)
		return ret;
	if (velo_veth_prefix_valid(prefix)) {
		snprintf(config->veth_prefix, sizeof(config->veth_prefix), "%s", prefix);
		return 0;
	}
	return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
			"vethPrefix \"%.32s\": expected 1 to %d characters a-z 0-9", prefix,
			VELO_VETH_PREFIX_MAX);
}

static int parse_log_level(const cJSON *root, struct velo_config *config)
{
	static const char *const names[] = {
		[VELO_LOG_ERROR] = "error",
		[VELO_LOG_WARN] = "warn",
		[VELO_LOG_INFO] = "info",
		[VELO_LOG_DEBUG] = "debug",
	};
	const char *level;
	int ret = config_get_string(root, "logLevel", &level);

	if (ret || !level)
		return ret;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(level, names[i])) {
			config->log_level = (enum velo_log_level)i;
			return 0;
		}
	}
	return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
			"logLevel \"%.32s\": expected error, warn, info or debug", level);
}

static int parse_numbers(const cJSON *root, struct velo_config *config)
{
	double mtu = 0, log_max = DEFAULT_LOG_MAX_BYTES, lock_ms = DEFAULT_LOCK_TIMEOUT_MS;
	double probe_ms = VELO_SOCKMAP_PROBE_TIMEOUT_MS;
	int ret;

	ret = config_get_integer(root, "mtu", 0, MTU_MAX, &mtu);
	if (ret)
		return ret;
	if (mtu != 0 && mtu < MTU_MIN)
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"mtu: %.0f is out of range, expected %d to %d (or 0 for auto)", mtu,
				MTU_MIN, MTU_MAX);
	ret = config_get_integer(root, "logMaxBytes", 0, (double)LOG_MAX_BYTES_MAX, &log_max);
	if (ret)
		return ret;
	ret = config_get_integer(root, "lockTimeoutMs", 1, LOCK_TIMEOUT_MS_MAX, &lock_ms);
	if (ret)
		return ret;
	config->mtu = (unsigned)mtu;
	config->log_max_bytes = (unsigned long)log_max;
	ret = config_get_integer(root, "sockmapProbeTimeoutMs", 1, SOCKMAP_PROBE_TIMEOUT_MS_MAX,
				 &probe_ms);
	if (ret)
		return ret;
	config->lock_timeout_ms = (unsigned)lock_ms;
	config->sockmap_probe_timeout_ms = (unsigned)probe_ms;
	return 0;
}

static int parse_bool_field(const cJSON *root, const char *field, bool *out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);

	if (!item)
		return 0;
	if (!cJSON_IsBool(item))
		return config_invalid(field, "true or false", item);
	*out = cJSON_IsTrue(item);
	return 0;
}

static int parse_paths(const cJSON *root, struct velo_paths *paths)
{
	int ret;

	ret = config_get_path(root, "stateDir", paths->state_dir);
	if (!ret)
		ret = config_get_path(root, "runDir", paths->run_dir);
	if (!ret)
		ret = config_get_path(root, "bpffsDir", paths->bpffs_dir);
	if (!ret)
		ret = config_get_path(root, "logFile", paths->log_file);
	return ret;
}

/*
 * Where pods' cgroups are (cgroup/pod.c): cgroupRoot, the kubelet's cgroup
 * root (a path prefix or a slice, checked where it is used), and cgroupMount,
 * a cgroup2 mount to use instead of the one in /proc/self/mountinfo.
 */
static int parse_cgroup(const cJSON *root, struct velo_config *config)
{
	const char *value;
	int ret;

	ret = config_get_string(root, "cgroupRoot", &value);
	if (!ret && value)
		ret = config_copy_string("cgroupRoot", value, config->cgroup_root,
					 sizeof(config->cgroup_root));
	if (!ret)
		ret = config_get_string(root, "cgroupMount", &value);
	if (!ret && value)
		ret = config_copy_string("cgroupMount", value, config->cgroup_mount,
					 sizeof(config->cgroup_mount));
	return ret;
}

/* Node-wide annotation defaults: only velo.dev/ keys belong here; a bare "fastpath" is a typo. */
static int parse_defaults(const cJSON *root, struct velo_config *config)
{
	const cJSON *defaults = cJSON_GetObjectItemCaseSensitive(root, "defaults");
	const cJSON *item;

	if (!defaults)
		return 0;
	if (!cJSON_IsObject(defaults))
		return config_invalid("defaults", "an object of velo.dev/ annotations", defaults);
	cJSON_ArrayForEach (item, defaults) {
		if (strncmp(item->string, VELO_ANNOTATION_PREFIX, strlen(VELO_ANNOTATION_PREFIX)))
			return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
					"defaults: key \"%.64s\" is not a " VELO_ANNOTATION_PREFIX
					" annotation",
					item->string);
	}
	return velo_annotations_parse(defaults, &config->defaults);
}

/*
 * runtimeConfig keys are matched ignoring case on purpose, and only here:
 * containerd capitalises some capability keys (e.g. "PortMappings",
 * "Bandwidth") while podman passes them as the conflist spells them.
 */
static const cJSON *runtime_config_get(const cJSON *runtime_config, const char *key)
{
	return cJSON_GetObjectItem(runtime_config, key);
}

/* A rate of runtimeConfig.bandwidth (bits/s): absent or null is no limit. */
static int bandwidth_rate(const cJSON *bandwidth, const char *key, bool *limited)
{
	const cJSON *rate = cJSON_GetObjectItem(bandwidth, key);

	if (!rate || cJSON_IsNull(rate))
		return 0;
	if (!cJSON_IsNumber(rate) || rate->valuedouble < 0)
		return cni_fail(
			-EINVAL, CNI_ERR_INVALID_CONFIG,
			"runtimeConfig." BANDWIDTH_KEY ".%s: expected a rate in bits/s "
			"(a number >= 0), got %s",
			key, cJSON_IsNumber(rate) ? "a negative number" : config_type_name(rate));
	if (rate->valuedouble > 0)
		*limited = true;
	return 0;
}

/*
 * The chained bandwidth plugin shapes this pod on its host veth (tbf) and an
 * ifb: any rate above 0 means the pod must keep every packet on that path.
 */
static int parse_bandwidth(const cJSON *runtime_config, struct velo_config *config)
{
	const cJSON *bandwidth = runtime_config_get(runtime_config, BANDWIDTH_KEY);
	int ret;

	if (!bandwidth || cJSON_IsNull(bandwidth))
		return 0;
	if (!cJSON_IsObject(bandwidth))
		return config_invalid("runtimeConfig." BANDWIDTH_KEY, "an object", bandwidth);
	ret = bandwidth_rate(bandwidth, "ingressRate", &config->shaped);
	if (!ret)
		ret = bandwidth_rate(bandwidth, "egressRate", &config->shaped);
	return ret;
}

static int parse_runtime_config(const cJSON *root, struct velo_config *config)
{
	const cJSON *runtime_config = cJSON_GetObjectItemCaseSensitive(root, "runtimeConfig");
	const cJSON *annotations, *cgroup_path;
	int ret;

	if (!runtime_config)
		return 0;
	if (!cJSON_IsObject(runtime_config))
		return config_invalid("runtimeConfig", "an object", runtime_config);
	config->runtime_config = runtime_config;
	ret = parse_bandwidth(runtime_config, config);
	if (ret)
		return ret;

	annotations = runtime_config_get(runtime_config, POD_ANNOTATIONS_KEY);
	if (annotations && !cJSON_IsNull(annotations)) {
		if (!cJSON_IsObject(annotations))
			return config_invalid("runtimeConfig." POD_ANNOTATIONS_KEY, "an object",
					      annotations);
		ret = velo_annotations_parse(annotations, &config->pod);
		if (ret)
			return ret;
		config->pod_annotations_passed = true;
	}
	cgroup_path = runtime_config_get(runtime_config, CGROUP_PATH_KEY);
	if (cgroup_path && !cJSON_IsNull(cgroup_path)) {
		if (!cJSON_IsString(cgroup_path) || !cgroup_path->valuestring)
			return config_invalid("runtimeConfig." CGROUP_PATH_KEY, "a string",
					      cgroup_path);
		return config_copy_string("runtimeConfig." CGROUP_PATH_KEY,
					  cgroup_path->valuestring, config->cgroup_path,
					  sizeof(config->cgroup_path));
	}
	return 0;
}

/* The Kubernetes API as the annotation source where the runtime passes none (k8s_api.h). */
static int parse_k8s_api(const cJSON *root, struct velo_k8s_api_config *api)
{
	double timeout_ms = VELO_API_TIMEOUT_MS_DEFAULT;
	int ret;

	ret = config_get_path(root, "kubeconfig", api->kubeconfig);
	if (!ret)
		ret = config_get_integer(root, "apiTimeoutMs", 1, VELO_API_TIMEOUT_MS_MAX,
					 &timeout_ms);
	if (ret)
		return ret;
	api->timeout_ms = (unsigned)timeout_ms;
	/* Fail closed by default wherever the node is set up to read annotations from the API. */
	api->require_annotations = api->kubeconfig[0] != '\0';
	return parse_bool_field(root, "requireAnnotations", &api->require_annotations);
}

static int parse_passthrough(const cJSON *root, struct velo_config *config)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "prevResult");

	if (item && !cJSON_IsNull(item)) {
		if (!cJSON_IsObject(item))
			return config_invalid("prevResult", "an object", item);
		config->prev_result = item;
	}
	item = cJSON_GetObjectItemCaseSensitive(root, "cni.dev/valid-attachments");
	if (item && !cJSON_IsNull(item)) {
		if (!cJSON_IsArray(item))
			return config_invalid("cni.dev/valid-attachments", "an array", item);
		config->valid_attachments = item;
	}
	return 0;
}

/*
 * cJSON stores strings as C strings, so an escaped NUL would silently cut a
 * value short ("/var/lib/velo\u0000/../x" would read as "/var/lib/velo").
 */
static bool has_escaped_nul(const char *text)
{
	for (const char *p = text; (p = strstr(p, "\\u0000")); p++) {
		size_t backslashes = 0;

		while (p - backslashes > text && p[-1 - (ptrdiff_t)backslashes] == '\\')
			backslashes++;
		if (backslashes % 2 == 0)
			return true;
	}
	return false;
}

static int parse_json(const char *text, struct velo_config *config)
{
	size_t len = strlen(text);
	const char *end = NULL;
	size_t offset, line = 1, column = 1;

	/* len + 1 takes the NUL in, so trailing garbage after the object is an error. */
	config->root = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	if (config->root)
		return 0;
	offset = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
	for (size_t i = 0; i < offset; i++) {
		if (text[i] == '\n') {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	if (offset >= len)
		return cni_fail(
			-EINVAL, CNI_ERR_DECODE,
			"network config: invalid JSON: unexpected end at byte %zu (line %zu, "
			"column %zu)",
			offset, line, column);
	return cni_fail(-EINVAL, CNI_ERR_DECODE,
			"network config: invalid JSON at byte %zu (line %zu, column %zu) near "
			"\"%.20s\"",
			offset, line, column, text + offset);
}

static void set_defaults(struct velo_config *config)
{
	memset(config, 0, sizeof(*config));
	snprintf(config->veth_prefix, sizeof(config->veth_prefix), "%s", DEFAULT_VETH_PREFIX);
	snprintf(config->paths.state_dir, PATH_MAX, "%s", DEFAULT_STATE_DIR);
	snprintf(config->paths.run_dir, PATH_MAX, "%s", DEFAULT_RUN_DIR);
	snprintf(config->paths.bpffs_dir, PATH_MAX, "%s", DEFAULT_BPFFS_DIR);
	snprintf(config->paths.log_file, PATH_MAX, "%s", DEFAULT_LOG_FILE);
	config->log_level = VELO_LOG_INFO;
	config->log_max_bytes = DEFAULT_LOG_MAX_BYTES;
	config->lock_timeout_ms = DEFAULT_LOCK_TIMEOUT_MS;
	config->sockmap_probe_timeout_ms = VELO_SOCKMAP_PROBE_TIMEOUT_MS;
}

static int parse_fields(const cJSON *root, struct velo_config *config)
{
	int ret;

	if (!cJSON_IsObject(root))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"network config: expected a JSON object, got %s",
				config_type_name(root));
	ret = parse_version(root, config);
	if (!ret)
		ret = parse_name(root, config);
	if (!ret)
		ret = parse_type(root);
	if (!ret)
		ret = parse_ipam(root, config);
	if (!ret)
		ret = parse_numbers(root, config);
	if (!ret)
		ret = parse_veth_prefix(root, config);
	if (!ret)
		ret = parse_paths(root, &config->paths);
	if (!ret)
		ret = parse_log_level(root, config);
	if (!ret)
		ret = parse_cgroup(root, config);
	if (!ret)
		ret = parse_bool_field(root, "ipv6AllForwarding", &config->ipv6_all_forwarding);
	if (!ret)
		ret = parse_bool_field(root, "policy", &config->policy);
	if (!ret)
		ret = velo_sm_bugs_parse(
			"sockmapAcceptKernelBugs",
			cJSON_GetObjectItemCaseSensitive(root, "sockmapAcceptKernelBugs"),
			&config->sockmap_accept_bugs);
	if (!ret)
		ret = parse_passthrough(root, config);
	if (!ret)
		ret = parse_k8s_api(root, &config->k8s);
	if (!ret)
		ret = parse_defaults(root, config);
	if (!ret)
		ret = parse_runtime_config(root, config);
	return ret;
}

int velo_config_parse(const char *text, struct velo_config *config)
{
	int ret;

	set_defaults(config);
	if (!text)
		return cni_fail(-EINVAL, CNI_ERR_DECODE, "network config: empty");
	if (has_escaped_nul(text))
		return cni_fail(-EINVAL, CNI_ERR_INVALID_CONFIG,
				"network config: strings must not contain NUL (\\u0000)");
	ret = parse_json(text, config);
	if (!ret)
		ret = parse_fields(config->root, config);
	if (ret) {
		/* Nothing is owned after a failure; the caller reports from stdin. */
		velo_config_free(config);
		return ret;
	}
	velo_annotations_merge(&config->defaults, &config->pod, &config->effective);
	return 0;
}

void velo_config_free(struct velo_config *config)
{
	cJSON_Delete(config->root);
	config->root = NULL;
	config->version_str = NULL;
	config->ipam = NULL;
	config->prev_result = NULL;
	config->valid_attachments = NULL;
	config->runtime_config = NULL;
}

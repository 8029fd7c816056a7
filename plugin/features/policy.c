// SPDX-License-Identifier: Apache-2.0
/*
 * NetworkPolicy's programs on a pod's host veth at ADD, and their removal at
 * DEL. velod's switch (state/policy_switch.h) decides; the conflist's
 * "policy" is read for compatibility and changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/cni.h"
#include "base/error.h"
#include "base/log.h"
#include "datapath/policy_bpf.h"
#include "datapath/tc_attach.h"
#include "features/policy.h"
#include "state/policy_switch.h"

/* A Kubernetes pod while velod's switch is on: the conflist's "policy" can't turn it on or off. */
static bool policy_wanted(const struct velo_request *request)
{
	return request->env.args.pod_namespace[0] &&
	       velo_policy_switch_read(&request->config.paths) == VELO_POLICY_SWITCH_ON;
}

/*
 * 1 when velod's namespace list names ns, or there is no list yet; 0 when
 * the list says no policy lives in ns.
 */
static int namespace_may_be_selected(const struct velo_paths *paths, const char *ns)
{
	char path[PATH_MAX], line[300];
	int found = 0;
	FILE *file;

	if (snprintf(path, sizeof(path), "%s/%s", paths->run_dir, VELO_POLICY_NAMESPACES_FILE) >=
	    (int)sizeof(path))
		return 1;
	file = fopen(path, "re");
	if (!file)
		return 1;
	while (!found && fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = '\0';
		found = !strcmp(line, ns);
	}
	fclose(file);
	return found;
}

static int policy_attach(struct velo_request *request)
{
	const struct velo_paths *paths = &request->config.paths;
	struct velo_policy_bpf bpf;
	int ret;

	/* Recorded either way: velod may attach later, and DEL then removes it. */
	if (!namespace_may_be_selected(paths, request->env.args.pod_namespace)) {
		pr_info("policy: no NetworkPolicy in namespace %s yet",
			request->env.args.pod_namespace);
		return 0;
	}
	ret = velo_policy_bpf_open(paths, request->config.lock_timeout_ms, &bpf);
	if (ret)
		return ret;
	ret = velo_policy_attach(paths, &bpf, &request->record);
	velo_policy_bpf_close(&bpf);
	if (ret)
		cni_fail(ret, VELO_ERR_FEATURE, "policy: can't attach to %s: %s",
			 request->record.host_ifname, strerror(-ret));
	else
		pr_info("policy: attached to %s; velod places the pod",
			request->record.host_ifname);
	return ret;
}

static int policy_detach(struct velo_request *request)
{
	const struct velo_paths *paths = &request->config.paths;
	struct velo_policy_bpf bpf;
	bool have_maps;

	if (!(request->record.features & VELO_FEATURE_POLICY) &&
	    request->record.phase == VELO_PHASE_READY &&
	    !velo_policy_any_attached(&request->config.paths, &request->record))
		return 0;
	have_maps = !velo_policy_bpf_open_pinned(paths, &bpf);
	/* The entry only while the veth is ours: a newer pod's veth may have the ifindex. */
	velo_policy_detach(paths,
			   have_maps && velo_host_veth_is_ours(&request->record) ? &bpf : NULL,
			   &request->record);
	if (have_maps)
		velo_policy_bpf_close(&bpf);
	return 0;
}

/* Whether velod attached the programs or not changes as policies do: only halves are drift. */
static int policy_check(struct velo_request *request)
{
	const struct velo_record *record = &request->record;
	bool from = velo_policy_hook_attached(&request->config.paths, record, VELO_POL_HOOK_FROM);
	bool to = velo_policy_hook_attached(&request->config.paths, record, VELO_POL_HOOK_TO);

	if (from == to)
		return 0;
	cni_error_detail("policy: only the %s program is on %s", from ? "sending" : "receiving",
			 record->host_ifname);
	return -EIO;
}

const struct velo_feature velo_feature_policy = {
	.name = "policy",
	.bit = VELO_FEATURE_POLICY,
	.wanted = policy_wanted,
	.attach = policy_attach,
	.detach = policy_detach,
	.check = policy_check,
	.agent_managed = true,
};

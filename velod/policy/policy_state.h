/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What velod keeps of policy between syncs (policy.c fills it, policy_show.c
 * reads it): the sources, the maps it writes, the last computation and what
 * they hold.
 * Private to velod/policy/.
 */
#ifndef VELOD_POLICY_POLICY_STATE_H
#define VELOD_POLICY_POLICY_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "datapath/policy_maps.h"
#include "policy/objects.h"
#include "policy/table.h"
#include "agent/agent.h"
#include "k8s/k8s_event_post.h"
#include "k8s/k8s_servicecidrs.h"
#include "k8s/k8s_watch_set.h"
#include "policy_report.h"

struct policy_state {
	const struct agent_config *config;
	struct k8s_watch_set *watch; /* policySource "api" (k8s_policy.h) */
	struct k8s_servicecidrs *cidrs; /* the API's Service ranges, with an API client */
	struct k8s_event_post *events; /* the problems' Events, with an API client */
	bool cidrs_taken; /* listed (or found not served) once: the maps may be written */
	unsigned cidrs_dropped; /* Service ranges that didn't fit at the last sync */
	struct velo_pol_objects file_objects; /* policySource "file": the last good version */
	bool file_read; /* the file's current version was read (good or bad) */
	bool file_good; /* some version of the file was good: file_objects hold the last */
	long long mtime_ns, size, ino; /* of the file last read */
	long long records_sig; /* of the record directories last scanned */
	uint64_t next_look_ns, next_sync_ns;
	bool dirty; /* something changed since the maps were last written */
	struct velo_pol_numbering numbering;
	/* The pinned objects, opened at the first sync and kept; again after a failed write, or
	 * when a look finds the pins replaced (velo_policy_bpf_current). */
	struct velo_policy_bpf bpf;
	bool bpf_open;
	struct velo_pol_written written;
	/* What the last sync computed: for /policy and the drop counters' pod names. */
	struct velo_pol_tables tables;
	struct velo_pol_local_pod *local;
	unsigned n_local;
	__u32 revision;
	char *namespaces; /* the namespaces file's last content */
	struct policy_report report; /* the last sync's problems */
	char *ids_saved; /* the numbering as last saved (policy_ids.h) */
};

#endif

// SPDX-License-Identifier: Apache-2.0
/* NetworkPolicy's problems: objects velod could not use, pods it could not place (policy_report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "k8s/k8s_event_post.h"
#include "policy_report.h"

/* A problem into out, unplaced, local and uid unset; NULL when out of memory. */
static struct policy_problem *add(struct policy_report *out, unsigned *cap, const char *kind,
				  const char *ns, const char *name, const char *reason)
{
	struct policy_problem *item;

	if (out->n == *cap) {
		struct policy_problem *grown =
			realloc(out->items, (*cap = *cap ? *cap * 2 : 8) * sizeof(*grown));

		if (!grown)
			return NULL;
		out->items = grown;
	}
	item = &out->items[out->n];
	memset(item, 0, sizeof(*item));
	item->kind = kind;
	snprintf(item->ns, sizeof(item->ns), "%s", ns);
	snprintf(item->name, sizeof(item->name), "%s", name);
	item->reason = strdup(reason);
	if (!item->reason)
		return NULL;
	out->n++;
	return item;
}

static int cmp_problem(const void *a, const void *b)
{
	const struct policy_problem *x = a, *y = b;
	int cmp = strcmp(x->kind, y->kind);

	if (!cmp)
		cmp = strcmp(x->ns, y->ns);
	if (!cmp)
		cmp = strcmp(x->name, y->name);
	return cmp ? cmp : x->unplaced - y->unplaced;
}

static bool has_policy(const struct velo_pol_objects *objects, const char *ns)
{
	for (unsigned i = 0; i < objects->n_netpols; i++)
		if (!strcmp(objects->netpols[i].ns, ns))
			return true;
	return false;
}

int policy_report_collect(const struct velo_pol_objects *objects,
			  const struct velo_pol_tables *tables, struct policy_report *out)
{
	struct policy_problem *item = NULL;
	unsigned cap = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < objects->n_netpols; i++) {
		const struct velo_pol_netpol *netpol = &objects->netpols[i];

		if (!netpol->problem)
			continue;
		item = add(out, &cap, "NetworkPolicy", netpol->ns, netpol->name, netpol->problem);
		if (!item)
			goto fail;
		snprintf(item->uid, sizeof(item->uid), "%s", netpol->uid);
	}
	for (unsigned i = 0; i < objects->n_cnps; i++) {
		const struct velo_pol_cnp *cnp = &objects->cnps[i];

		if (!cnp->problem)
			continue;
		item = add(out, &cap, "ClusterNetworkPolicy", "", cnp->name, cnp->problem);
		if (!item)
			goto fail;
		snprintf(item->uid, sizeof(item->uid), "%s", cnp->uid);
	}
	for (unsigned i = 0; i < objects->n_pods; i++) {
		const struct velo_pol_pod *pod = &objects->pods[i];

		if (!pod->problem)
			continue;
		item = add(out, &cap, "Pod", pod->ns, pod->name, pod->problem);
		if (!item)
			goto fail;
		item->local = velo_pol_tables_placed(tables, pod->ns, pod->name) != NULL;
		snprintf(item->uid, sizeof(item->uid), "%s", pod->uid);
	}
	for (unsigned i = 0; i < tables->n_placed; i++) {
		const struct velo_pol_placed *placed = &tables->placed[i];
		const struct velo_pol_pod *pod;

		if (placed->id != VELO_ID_NONE || !placed->unplaced ||
		    !has_policy(objects, placed->ns))
			continue;
		item = add(out, &cap, "Pod", placed->ns, placed->name, placed->unplaced);
		if (!item)
			goto fail;
		item->unplaced = item->local = true;
		pod = velo_pol_objects_pod(objects, placed->ns, placed->name);
		if (pod)
			snprintf(item->uid, sizeof(item->uid), "%s", pod->uid);
	}
	if (out->n)
		qsort(out->items, out->n, sizeof(*out->items), cmp_problem);
	return 0;
fail:
	policy_report_free(out);
	return -ENOMEM;
}

static bool same(const struct policy_problem *a, const struct policy_problem *b)
{
	return !cmp_problem(a, b) && !strcmp(a->reason, b->reason);
}

static bool in(const struct policy_report *report, const struct policy_problem *item)
{
	for (unsigned i = 0; i < report->n; i++)
		if (same(&report->items[i], item))
			return true;
	return false;
}

void policy_report_log(const struct policy_report *old, const struct policy_report *now)
{
	for (unsigned i = 0; i < now->n; i++) {
		const struct policy_problem *item = &now->items[i];

		if (in(old, item))
			continue;
		if (item->unplaced)
			pr_warn("policy: pod %s/%s not placed (with its programs on, its traffic "
				"is dropped as policy-pending): %s",
				item->ns, item->name, item->reason);
		else
			pr_warn("policy: %s %s%s%s: %s", item->kind, item->ns,
				item->ns[0] ? "/" : "", item->name, item->reason);
	}
	for (unsigned i = 0; i < old->n; i++)
		if (!in(now, &old->items[i]))
			pr_info("policy: %s %s%s%s: %s no more", old->items[i].kind,
				old->items[i].ns, old->items[i].ns[0] ? "/" : "",
				old->items[i].name,
				old->items[i].unplaced ? "unplaced" : "problem");
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static void label(FILE *text, const char *value)
{
	for (const char *c = value; *c; c++) {
		if (*c == '\\' || *c == '"')
			fputc('\\', text);
		if (*c == '\n')
			fputs("\\n", text);
		else
			fputc(*c, text);
	}
}

static void series(FILE *text, const char *metric, const struct policy_problem *item)
{
	fprintf(text, "%s{kind=\"%s\",namespace=\"", metric, item->kind);
	label(text, item->ns);
	fputs("\",name=\"", text);
	label(text, item->name);
	fputs("\",reason=\"", text);
	label(text, item->reason);
	fputs("\"} 1\n", text);
}

void policy_report_metrics(const struct policy_report *report, FILE *text)
{
	fprintf(text, "# HELP velo_policy_object_errors A NetworkPolicy or Pod with fields velod "
		      "could not use (NetworkPolicy: failed closed), and why.\n"
		      "# TYPE velo_policy_object_errors gauge\n");
	for (unsigned i = 0; i < report->n; i++)
		if (!report->items[i].unplaced)
			series(text, "velo_policy_object_errors", &report->items[i]);
	fprintf(text, "# HELP velo_policy_unplaced_pods A pod of this node velod could not place "
		      "(with its programs on, its traffic is dropped as policy-pending), and why.\n"
		      "# TYPE velo_policy_unplaced_pods gauge\n");
	for (unsigned i = 0; i < report->n; i++)
		if (report->items[i].unplaced)
			series(text, "velo_policy_unplaced_pods", &report->items[i]);
}

/* Whether pod ("ns/name") is item's pod, or item is a NetworkPolicy of pod's namespace. */
static bool concerns(const struct policy_problem *item, const char *pod)
{
	size_t len = strlen(item->ns);

	if (strncmp(pod, item->ns, len) || pod[len] != '/')
		return false;
	return strcmp(item->kind, "Pod") || !strcmp(pod + len + 1, item->name);
}

void policy_report_json(const struct policy_report *report, const char *pod, cJSON *answer)
{
	cJSON *list = cJSON_AddArrayToObject(answer, "problems");

	for (unsigned i = 0; list && i < report->n; i++) {
		const struct policy_problem *item = &report->items[i];
		cJSON *one;

		if (pod && !concerns(item, pod))
			continue;
		one = cJSON_CreateObject();
		if (!one)
			return;
		cJSON_AddStringToObject(one, "kind", item->kind);
		cJSON_AddStringToObject(one, "namespace", item->ns);
		cJSON_AddStringToObject(one, "name", item->name);
		cJSON_AddStringToObject(one, "reason", item->reason);
		cJSON_AddBoolToObject(one, "unplaced", item->unplaced);
		cJSON_AddItemToArray(list, one);
	}
}

/* What an Event says about item: the reason's name, and the problem with what it means. */
static int event_note(const struct policy_problem *item, struct k8s_event_note *note)
{
	const char *reason, *meaning;
	char *message;

	if (item->unplaced) {
		reason = "PolicyPodUnplaced";
		meaning = "velod can't place this pod for NetworkPolicy (its traffic is dropped "
			  "as policy-pending until it can)";
	} else if (strcmp(item->kind, "Pod")) {
		reason = "PolicyUnusable";
		meaning = "velod can't use all of this NetworkPolicy and failed closed";
	} else {
		reason = "PolicyPodFieldsUnusable";
		meaning = "velod left out fields of this pod for NetworkPolicy";
	}
	if (asprintf(&message, "%s: %s", meaning, item->reason) < 0)
		return -ENOMEM;
	*note = (struct k8s_event_note){
		.kind = item->kind,
		.api_version = strcmp(item->kind, "Pod") ? "networking.k8s.io/v1" : "v1",
		.ns = item->ns,
		.name = item->name,
		.uid = item->uid,
		.reason = reason,
		.message = message,
	};
	return 0;
}

void policy_report_events(const struct policy_report *report, struct k8s_event_post *post,
			  uint64_t now_ns)
{
	struct k8s_event_note *notes;
	unsigned n = 0;

	if (!k8s_event_post_due(post, now_ns))
		return;
	notes = calloc(report->n + 1, sizeof(*notes));
	if (!notes)
		return;
	for (unsigned i = 0; i < report->n; i++) {
		const struct policy_problem *item = &report->items[i];

		/* Every node sees every Pod: a pod's problem is its own node's to say. */
		if (!strcmp(item->kind, "Pod") && !item->local)
			continue;
		/* A cluster-scoped object's Event has no namespace of its own to go to: logs and
		 * /metrics say it. */
		if (!item->ns[0])
			continue;
		if (!event_note(item, &notes[n]))
			n++;
	}
	k8s_event_post_sync(post, notes, n, now_ns);
	for (unsigned i = 0; i < n; i++)
		free((char *)notes[i].message);
	free(notes);
}

void policy_report_free(struct policy_report *report)
{
	for (unsigned i = 0; i < report->n; i++)
		free(report->items[i].reason);
	free(report->items);
	memset(report, 0, sizeof(*report));
}

// SPDX-License-Identifier: Apache-2.0
/*
 * Policy tables into maps (plugin/datapath/policy_maps.c) on unpinned maps
 * of the pinned ones' types: a first write reads the maps back and removes
 * what an earlier velod left, a later one writes only what changed, every
 * write bumps the revision and sets active, and the maps end up holding
 * exactly the tables. Needs CAP_BPF: skipped without it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cmocka.h>

#include "datapath/policy_maps.h"
#include "policy/cidr.h"
#include "policy/compute.h"
#include "policy/parse.h"

static struct velo_policy_bpf bpf = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };

static int setup(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, lpm, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);

	(void)state;
	bpf.ip_fd =
		bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "velotest_ip", sizeof(struct velo_pol_ip_key),
			       sizeof(struct velo_pol_ip), 1024, &lpm);
	bpf.subject_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "velotest_sub", sizeof(__u32),
					sizeof(struct velo_pol_subject), 1024, &hash);
	bpf.rule_fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "velotest_rule",
				     sizeof(struct velo_pol_rule_key), sizeof(struct velo_pol_rule),
				     1024, &lpm);
	bpf.tier_fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "velotest_tier",
				     sizeof(struct velo_pol_rule_key),
				     sizeof(struct velo_pol_tier_rule), 1024, &lpm);
	bpf.state_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "velotest_st", sizeof(__u32),
				      sizeof(struct velo_pol_state), 1, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int *fd = &bpf.ip_fd; fd <= &bpf.state_fd; fd++)
		if (*fd >= 0)
			close(*fd);
	return 0;
}

/* x/a (local, app=a), x/b (app=b) and more pods (a JSON list's items, "" for none). */
static void build_pods(const char *pods, const char *policies, struct velo_pol_numbering *numbering,
		       struct velo_pol_tables *tables);

static void build(const char *policies, struct velo_pol_numbering *numbering,
		  struct velo_pol_tables *tables)
{
	build_pods("", policies, numbering, tables);
}

static void build_pods(const char *pods, const char *policies, struct velo_pol_numbering *numbering,
		       struct velo_pol_tables *tables)
{
	char text[4096], why[200] = "";
	struct velo_pol_objects objects;
	struct velo_pol_local_pod local = { .ns = "x", .name = "a", .n_ips = 1 };
	struct velo_pol_node node = { .name = "n1", .local = &local, .n_local = 1 };
	int len;

	len = snprintf(text, sizeof(text),
		       "{\"pods\": [{\"metadata\": {\"namespace\": \"x\", \"name\": \"a\", "
		       "\"labels\": {\"app\": \"a\"}}, \"status\": {\"podIP\": \"10.0.0.1\"}}, "
		       "{\"metadata\": {\"namespace\": \"x\", \"name\": \"b\", \"labels\": "
		       "{\"app\": \"b\"}}, \"status\": {\"podIP\": \"10.0.0.2\"}}%s%s], "
		       "\"networkPolicies\": [%s]}",
		       pods[0] ? "," : "", pods, policies);
	assert_int_equal(velo_pol_objects_parse(text, (size_t)len, &objects, why, sizeof(why)), 0);
	assert_int_equal(velo_pol_cidr_parse("10.0.0.1", true, &local.ips[0]), 0);
	assert_int_equal(velo_pol_tables_build(&objects, &node, numbering, tables), 0);
	velo_pol_objects_free(&objects);
}

static unsigned count(int fd, size_t key_size)
{
	char key[64], prev[64];
	unsigned n = 0;

	while (!bpf_map_get_next_key(fd, n ? prev : NULL, key)) {
		memcpy(prev, key, key_size);
		n++;
	}
	return n;
}

static void test_writes(void **state)
{
	struct velo_pol_numbering numbering = {};
	struct velo_pol_written written = {};
	struct velo_pol_write_stats stats;
	struct velo_pol_tables tables;
	struct velo_pol_rule_key stale_key = { .prefixlen = 72, .subject = 7, .peer = 7 };
	struct velo_pol_rule stale = { 1 };
	struct velo_pol_state st;
	__u32 zero = 0;

	(void)state;
	if (bpf.ip_fd < 0 || bpf.subject_fd < 0 || bpf.rule_fd < 0 || bpf.tier_fd < 0 ||
	    bpf.state_fd < 0)
		skip(); /* no CAP_BPF */
	/* What an earlier velod left. */
	assert_int_equal(bpf_map_update_elem(bpf.rule_fd, &stale_key, &stale, BPF_ANY), 0);
	build("{\"metadata\": {\"namespace\": \"x\", \"name\": \"p\"}, \"spec\": {\"podSelector\":"
	      " {\"matchLabels\": {\"app\": \"a\"}}, \"ingress\": [{\"ports\": [{\"port\": 80}]}]}}",
	      &numbering, &tables);
	assert_int_equal(velo_pol_maps_write(&bpf, &tables, &written, &stats), 0);
	assert_int_equal(stats.put, tables.n_ips + tables.n_subjects + tables.n_rules);
	assert_int_equal(stats.removed, 1);
	assert_int_equal(stats.revision, 1);
	assert_true(written.valid);
	assert_int_equal(count(bpf.rule_fd, sizeof(struct velo_pol_rule_key)), 1);
	assert_int_equal(count(bpf.subject_fd, sizeof(__u32)), 1);
	assert_int_equal(count(bpf.ip_fd, sizeof(struct velo_pol_ip_key)), tables.n_ips);
	assert_int_equal(bpf_map_lookup_elem(bpf.state_fd, &zero, &st), 0);
	assert_int_equal(st.active, 1);
	velo_pol_tables_free(&tables);

	/* Port 80 becomes 81: one rule written, one removed, nothing else. */
	build("{\"metadata\": {\"namespace\": \"x\", \"name\": \"p\"}, \"spec\": {\"podSelector\":"
	      " {\"matchLabels\": {\"app\": \"a\"}}, \"ingress\": [{\"ports\": [{\"port\": 81}]}]}}",
	      &numbering, &tables);
	assert_int_equal(velo_pol_maps_write(&bpf, &tables, &written, &stats), 0);
	assert_int_equal(stats.put, 1);
	assert_int_equal(stats.removed, 1);
	assert_int_equal(stats.revision, 2);
	velo_pol_tables_free(&tables);

	/* No policy: subjects and rules go, the state says inactive. */
	build("", &numbering, &tables);
	written.valid = false; /* as after a failed write: read back */
	assert_int_equal(velo_pol_maps_write(&bpf, &tables, &written, &stats), 0);
	assert_int_equal(stats.put, 0);
	assert_int_equal(stats.removed, 2);
	assert_int_equal(count(bpf.rule_fd, sizeof(struct velo_pol_rule_key)), 0);
	assert_int_equal(count(bpf.subject_fd, sizeof(__u32)), 0);
	assert_int_equal(bpf_map_lookup_elem(bpf.state_fd, &zero, &st), 0);
	assert_int_equal(st.active, 0);
	assert_int_equal(st.revision, 3);
	velo_pol_tables_free(&tables);
	velo_pol_written_free(&written);
	velo_pol_numbering_free(&numbering);
}

static __u32 revision(void)
{
	struct velo_pol_state st;
	__u32 zero = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf.state_fd, &zero, &st), 0);
	return st.revision;
}

#define FROM_B                                                                                 \
	"{\"metadata\": {\"namespace\": \"x\", \"name\": \"p\"}, \"spec\": {\"podSelector\": " \
	"{\"matchLabels\": {\"app\": \"a\"}}, \"ingress\": [{\"from\": [{\"podSelector\": "    \
	"{\"matchLabels\": {\"app\": \"b\"}}}]}]}}"
#define POD_C(app)                                                                            \
	"{\"metadata\": {\"namespace\": \"x\", \"name\": \"c\", \"labels\": {\"app\": \"" app \
	"\"}}, \"status\": {\"podIP\": \"10.0.0.3\"}}"

/*
 * The revision moves (every flow judged again) only when a verdict can
 * change: a new peer pod's address, or one no rule names, leaves it; a
 * named peer's address going moves it; a write of the same tables leaves it.
 */
static void write_pods(const char *pods, struct velo_pol_numbering *numbering,
		       struct velo_pol_written *written, struct velo_pol_write_stats *stats)
{
	struct velo_pol_tables tables;

	build_pods(pods, FROM_B, numbering, &tables);
	assert_int_equal(velo_pol_maps_write(&bpf, &tables, written, stats), 0);
	velo_pol_tables_free(&tables);
}

static void test_revision_only_for_verdicts(void **state)
{
	struct velo_pol_numbering numbering = {};
	struct velo_pol_written written = {};
	struct velo_pol_write_stats stats;
	__u32 first;

	(void)state;
	if (bpf.ip_fd < 0 || bpf.state_fd < 0)
		skip(); /* no CAP_BPF */
	write_pods("", &numbering, &written, &stats);
	first = revision();
	assert_int_equal(stats.revision, first);
	/* The same tables again: nothing written, the revision stays. */
	write_pods("", &numbering, &written, &stats);
	assert_int_equal(stats.put + stats.removed, 0);
	assert_int_equal(revision(), first);
	/* x/c (app=b) comes elsewhere: its address is written, the revision stays. */
	write_pods(POD_C("b"), &numbering, &written, &stats);
	assert_int_equal(stats.put, 1);
	assert_int_equal(revision(), first);
	/* x/c's labels change to ones no rule names: its entry changes, from a named identity. */
	write_pods(POD_C("z"), &numbering, &written, &stats);
	assert_int_equal(stats.put, 1);
	assert_int_equal(revision(), first + 1);
	/* x/c (app=z, named by nothing) goes: the revision stays. */
	write_pods("", &numbering, &written, &stats);
	assert_int_equal(stats.removed, 1);
	assert_int_equal(revision(), first + 1);
	assert_int_equal(stats.revision, first + 1);
	velo_pol_written_free(&written);
	velo_pol_numbering_free(&numbering);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_revision_only_for_verdicts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

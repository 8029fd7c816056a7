// SPDX-License-Identifier: Apache-2.0
/*
 * velod's GET /policy answers (plugin/policy/describe.c): the policies
 * selecting a pod, its isolation, its rules as text with named ports
 * resolved, the node's pods in one list, an unknown pod; the policies a
 * policy drop of an identity ran into (flows).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/cidr.h"
#include "policy/compute.h"
#include "policy/describe.h"
#include "policy/parse.h"

static const char file[] =
	"{\"namespaces\": [{\"metadata\": {\"name\": \"x\", \"labels\": {\"ns\": \"x\"}}}], "
	"\"pods\": [{\"metadata\": {\"namespace\": \"x\", \"name\": \"a\", \"labels\": {\"app\": "
	"\"db\"}}, \"spec\": {\"containers\": [{\"ports\": [{\"name\": \"pg\", \"containerPort\": "
	"5432}]}]}, \"status\": {\"podIP\": \"10.0.0.1\"}}, {\"metadata\": {\"namespace\": \"x\", "
	"\"name\": \"b\"}, \"status\": {\"podIP\": \"10.0.0.2\"}}], \"networkPolicies\": "
	"[{\"metadata\": {\"namespace\": \"x\", \"name\": \"db\"}, \"spec\": {\"podSelector\": "
	"{\"matchLabels\": {\"app\": \"db\"}}, \"policyTypes\": [\"Ingress\", \"Egress\"], "
	"\"ingress\": [{\"from\": [{\"namespaceSelector\": {\"matchLabels\": {\"ns\": \"y\"}}, "
	"\"podSelector\": {\"matchExpressions\": [{\"key\": \"tier\", \"operator\": \"In\", "
	"\"values\": [\"a\", \"b\"]}, {\"key\": \"canary\", \"operator\": \"DoesNotExist\"}]}}, "
	"{\"ipBlock\": {\"cidr\": \"10.0.0.0/8\", \"except\": [\"10.1.0.0/16\"]}}], \"ports\": "
	"[{\"port\": \"pg\"}, {\"protocol\": \"UDP\", \"port\": 1000, \"endPort\": 2000}]}], "
	"\"egress\": [{\"ports\": [{\"protocol\": \"SCTP\"}]}]}}], \"clusterNetworkPolicies\": "
	"[{\"metadata\": {\"name\": \"floor\"}, \"spec\": {\"tier\": \"Baseline\", \"priority\": 1, "
	"\"subject\": {\"namespaces\": {}}, \"ingress\": [{\"action\": \"Deny\", \"from\": "
	"[{\"namespaces\": {}}]}]}}, {\"metadata\": {\"name\": \"guard\"}, \"spec\": {\"tier\": "
	"\"Admin\", \"priority\": 7, \"subject\": {\"pods\": {\"namespaceSelector\": {}, "
	"\"podSelector\": {\"matchLabels\": {\"app\": \"db\"}}}}, \"egress\": [{\"action\": "
	"\"Pass\", \"to\": [{\"networks\": [\"10.0.0.0/8\"]}]}]}}]}";

static void check(const cJSON *json, const char *expect)
{
	char *text = cJSON_PrintUnformatted(json);

	assert_non_null(text);
	if (!strstr(text, expect))
		fail_msg("%s\nlacks %s", text, expect);
	cJSON_free(text);
}

/* file's objects, this node with x/a and x/b, the tables built for it. */
struct fixture {
	struct velo_pol_local_pod local[2];
	struct velo_pol_node node;
	struct velo_pol_numbering numbering;
	struct velo_pol_objects objects;
	struct velo_pol_tables tables;
};

static void fixture_build(struct fixture *f)
{
	char why[200] = "";

	memset(f, 0, sizeof(*f));
	snprintf(f->local[0].ns, sizeof(f->local[0].ns), "x");
	snprintf(f->local[0].name, sizeof(f->local[0].name), "a");
	snprintf(f->local[1].ns, sizeof(f->local[1].ns), "x");
	snprintf(f->local[1].name, sizeof(f->local[1].name), "b");
	f->local[0].n_ips = f->local[1].n_ips = 1;
	f->node = (struct velo_pol_node){ .name = "n1", .local = f->local, .n_local = 2 };
	assert_int_equal(velo_pol_objects_parse(file, strlen(file), &f->objects, why, sizeof(why)),
			 0);
	assert_int_equal(velo_pol_cidr_parse("10.0.0.1", true, &f->local[0].ips[0]), 0);
	assert_int_equal(velo_pol_cidr_parse("10.0.0.2", true, &f->local[1].ips[0]), 0);
	assert_int_equal(velo_pol_tables_build(&f->objects, &f->node, &f->numbering, &f->tables),
			 0);
}

static void fixture_free(struct fixture *f)
{
	velo_pol_tables_free(&f->tables);
	velo_pol_numbering_free(&f->numbering);
	velo_pol_objects_free(&f->objects);
}

static void test_describe(void **state)
{
	struct fixture f;
	struct velo_pol_objects *objects = &f.objects;
	struct velo_pol_tables *tables = &f.tables;
	struct velo_pol_node *node = &f.node;
	cJSON *json;

	(void)state;
	fixture_build(&f);

	json = velo_pol_describe_pod(objects, node, tables, "x", "a");
	assert_non_null(json);
	check(json, "\"pod\":\"x/a\",\"addresses\":[\"10.0.0.1\"],\"identity\":");
	check(json, "\"isolation\":{\"ingress\":true,\"egress\":true}");
	check(json, "\"policies\":[{\"namespace\":\"x\",\"name\":\"db\",\"policyTypes\":"
		    "[\"Ingress\",\"Egress\"]}]");
	check(json, "\"from\":[\"pods tier in (a,b),!canary in namespaces ns=y\","
		    "\"10.0.0.0/8 except 10.1.0.0/16\"],\"ports\":[\"TCP/pg=5432\","
		    "\"UDP/1000-2000\"],\"policy\":\"x/db\"");
	check(json, "\"egress\":[{\"to\":[],\"ports\":[\"SCTP\"],\"policy\":\"x/db\"}]");
	/* ClusterNetworkPolicies in evaluation order: Admin before Baseline whatever the priority. */
	check(json, "\"clusterNetworkPolicies\":[{\"name\":\"guard\",\"tier\":\"Admin\","
		    "\"priority\":7,\"ingress\":0,\"egress\":1},{\"name\":\"floor\",\"tier\":"
		    "\"Baseline\",\"priority\":1,\"ingress\":1,\"egress\":0}]");
	cJSON_Delete(json);

	json = velo_pol_describe_pod(objects, node, tables, "x", "b");
	check(json, "\"isolation\":{\"ingress\":false,\"egress\":false},\"policies\":[],"
		    "\"ingress\":[],\"egress\":[],\"clusterNetworkPolicies\":[{\"name\":\"floor\"");
	cJSON_Delete(json);
	assert_null(velo_pol_describe_pod(objects, node, tables, "x", "c"));
	assert_int_equal(errno, ENOENT);

	json = velo_pol_describe_node(objects, node);
	check(json, "{\"pods\":[{\"pod\":\"x/a\",\"isolation\":{\"ingress\":true,\"egress\":true},"
		    "\"policies\":[{\"namespace\":\"x\",\"name\":\"db\"");
	check(json, "{\"pod\":\"x/b\",\"isolation\":{\"ingress\":false,\"egress\":false},"
		    "\"policies\":[]}");
	cJSON_Delete(json);
	fixture_free(&f);
}

static void test_isolating(void **state)
{
	struct fixture f;
	const struct velo_pol_objects *objects = &f.objects;
	const struct velo_pol_tables *tables = &f.tables;
	const struct velo_pol_placed *a, *b;
	char names[64], tiny[4];

	(void)state;
	fixture_build(&f);
	a = velo_pol_tables_placed(tables, "x", "a");
	b = velo_pol_tables_placed(tables, "x", "b");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(velo_pol_isolating(objects, tables, a->id, true, names, sizeof(names)), 1);
	assert_string_equal(names, "x/db");
	assert_int_equal(velo_pol_isolating(objects, tables, a->id, false, names, sizeof(names)),
			 1);
	assert_string_equal(names, "x/db");
	/* Cut short, still terminated. */
	assert_int_equal(velo_pol_isolating(objects, tables, a->id, true, tiny, sizeof(tiny)), 1);
	assert_string_equal(tiny, "x/d");
	/* Nothing selects b; no pod has the identity; not a pod identity at all. */
	assert_int_equal(velo_pol_isolating(objects, tables, b->id, true, names, sizeof(names)), 0);
	assert_string_equal(names, "");
	assert_int_equal(velo_pol_isolating(objects, tables, 9999, true, names, sizeof(names)), 0);
	assert_int_equal(
		velo_pol_isolating(objects, tables, VELO_ID_WORLD, false, names, sizeof(names)), 0);
	fixture_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_isolating),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/* The parts Kubernetes objects share, from cJSON (json.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/json.h"
#include "policy/json.h"
#include "policy/object.h"

int velo_pol_json_array(const cJSON *object, const char *name, const cJSON **array)
{
	const cJSON *item = velo_json_field(object, name);

	*array = NULL;
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) > VELO_POL_MAX_LIST)
		return -EINVAL;
	*array = item;
	return 0;
}

int velo_pol_json_meta(const cJSON *object, char *ns, char *name, size_t name_size)
{
	const cJSON *meta = velo_json_field(object, "metadata");

	if (velo_json_string(meta, "name", name, name_size) || !name[0])
		return -EINVAL;
	if (!ns)
		return 0;
	if (velo_json_string(meta, "namespace", ns, VELO_POL_NS_MAX))
		return -EINVAL;
	if (!ns[0])
		snprintf(ns, VELO_POL_NS_MAX, "default");
	return 0;
}

bool velo_pol_json_annotated(const cJSON *object, const char *key)
{
	const cJSON *annotations =
		velo_json_field(velo_json_field(object, "metadata"), "annotations");
	const cJSON *value = velo_json_field(annotations, key);

	return cJSON_IsString(value) && !strcmp(value->valuestring, "true");
}

void velo_pol_json_uid(const cJSON *object, char *uid)
{
	if (velo_json_string(velo_json_field(object, "metadata"), "uid", uid, VELO_POL_UID_MAX))
		uid[0] = '\0';
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct velo_pol_label *)a)->key,
		      ((const struct velo_pol_label *)b)->key);
}

int velo_pol_json_labels(const cJSON *map, struct velo_pol_labels *out)
{
	const cJSON *item;
	int size;

	memset(out, 0, sizeof(*out));
	if (!map || cJSON_IsNull(map))
		return 0;
	size = cJSON_GetArraySize(map);
	if (!cJSON_IsObject(map) || size > VELO_POL_MAX_LIST)
		return -EINVAL;
	if (!size)
		return 0;
	out->items = calloc((size_t)size, sizeof(*out->items));
	if (!out->items)
		return -ENOMEM;
	cJSON_ArrayForEach (item, map) {
		struct velo_pol_label *label = &out->items[out->n];

		if (!cJSON_IsString(item) || !item->string) {
			velo_pol_labels_free(out);
			return -EINVAL;
		}
		label->key = strdup(item->string);
		label->value = strdup(item->valuestring);
		out->n++;
		if (!label->key || !label->value) {
			velo_pol_labels_free(out);
			return -ENOMEM;
		}
	}
	qsort(out->items, out->n, sizeof(*out->items), cmp_label);
	for (unsigned i = 1; i < out->n; i++) {
		if (!strcmp(out->items[i - 1].key, out->items[i].key)) {
			velo_pol_labels_free(out);
			return -EINVAL; /* cJSON keeps duplicate keys; the API never sends them */
		}
	}
	return 0;
}

static int expr_parse(const cJSON *json, struct velo_pol_expr *out)
{
	static const char *const ops[] = { "In", "NotIn", "Exists", "DoesNotExist" };
	const cJSON *values, *value;
	char key[VELO_POL_NAME_MAX * 2], op[16];
	unsigned i;

	if (!cJSON_IsObject(json) || velo_json_string(json, "key", key, sizeof(key)) || !key[0] ||
	    velo_json_string(json, "operator", op, sizeof(op)) ||
	    velo_pol_json_array(json, "values", &values))
		return -EINVAL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]) && strcmp(op, ops[i]); i++)
		;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return -EINVAL;
	out->op = (enum velo_pol_op)i;
	/* The API's validation: In and NotIn need values, the others take none. */
	if ((out->op <= VELO_POL_OP_NOT_IN) != (cJSON_GetArraySize(values) > 0))
		return -EINVAL;
	out->key = strdup(key);
	if (!out->key)
		return -ENOMEM;
	if (!cJSON_GetArraySize(values))
		return 0;
	out->values = calloc((size_t)cJSON_GetArraySize(values), sizeof(*out->values));
	if (!out->values)
		return -ENOMEM;
	cJSON_ArrayForEach (value, values) {
		if (!cJSON_IsString(value))
			return -EINVAL;
		out->values[out->n_values] = strdup(value->valuestring);
		if (!out->values[out->n_values++])
			return -ENOMEM;
	}
	return 0;
}

int velo_pol_json_selector(const cJSON *json, struct velo_pol_selector *out)
{
	const cJSON *exprs, *expr;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(json))
		return -EINVAL;
	ret = velo_pol_json_labels(velo_json_field(json, "matchLabels"), &out->match);
	if (!ret)
		ret = velo_pol_json_array(json, "matchExpressions", &exprs);
	if (!ret && cJSON_GetArraySize(exprs)) {
		out->exprs = calloc((size_t)cJSON_GetArraySize(exprs), sizeof(*out->exprs));
		if (!out->exprs)
			ret = -ENOMEM;
		cJSON_ArrayForEach (expr, exprs) {
			if (ret)
				break;
			ret = expr_parse(expr, &out->exprs[out->n_exprs++]);
		}
	}
	if (ret)
		velo_pol_selector_free(out);
	return ret;
}

int velo_pol_json_protocol(const cJSON *object, const char *name, uint8_t *proto)
{
	char text[8];

	if (velo_json_string(object, name, text, sizeof(text)))
		return -EINVAL;
	if (!text[0] || !strcmp(text, "TCP"))
		*proto = IPPROTO_TCP;
	else if (!strcmp(text, "UDP"))
		*proto = IPPROTO_UDP;
	else if (!strcmp(text, "SCTP"))
		*proto = IPPROTO_SCTP;
	else
		return -EINVAL;
	return 0;
}

void velo_pol_note(char *notes, size_t size, const char *fmt, ...)
{
	size_t len = strlen(notes);
	va_list ap;

	if (len && len + 2 < size)
		len += (size_t)snprintf(notes + len, size - len, "; ");
	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(notes + len, size - len, fmt, ap);
	va_end(ap);
}

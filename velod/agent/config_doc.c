// SPDX-License-Identifier: Apache-2.0
/*
 * docs/velod.md's config reference (config_doc.h): one table row per key of
 * config_fields.c, between markers hack/velod-config-doc.sh finds, so the doc
 * can't drift from what velod reads.
 */
#include <stdio.h>
#include <string.h>

#include "config_doc.h"
#include "config_fields.h"

/* "a", "a or b", "a, b or c" of an enum's names, in backticks. */
static void print_names(FILE *out, const char *const *names)
{
	for (unsigned i = 0; names[i]; i++)
		fprintf(out, "%s`%s`", i == 0 ? "" : names[i + 1] ? ", " : " or ", names[i]);
}

static void print_type(FILE *out, const struct config_field *field)
{
	const char *unit = field->type == CONFIG_MS ? "milliseconds" : "seconds";
	bool empty_ok = field->flags & CONFIG_EMPTY_OK;

	switch (field->type) {
	case CONFIG_STRING:
		fprintf(out, "%s, %u to %zu bytes",
			field->flags & CONFIG_LOWER_ALNUM ? "`a-z`, `0-9`" : "string", !empty_ok,
			field->size - 1);
		break;
	case CONFIG_PATH:
		fprintf(out, "path%s", empty_ok ? " or `\"\"`" : "");
		break;
	case CONFIG_BOOL:
		fprintf(out, "boolean");
		break;
	case CONFIG_UINT:
		fprintf(out, "integer, %.15g to %.15g%s", field->min, field->max,
			field->flags & CONFIG_POWER_OF_TWO ? ", a power of two" : "");
		break;
	case CONFIG_SECONDS:
	case CONFIG_MS:
		fprintf(out, "%s, %.15g to %.15g", unit, field->min, field->max);
		break;
	case CONFIG_SECONDS_FRACTION:
		fprintf(out, "seconds, %.15g to %.15g, fractions too", field->min, field->max);
		break;
	case CONFIG_ENUM:
		print_names(out, field->names);
		break;
	case CONFIG_NAMES:
		fprintf(out, "a name or a list of them, at most %zu", field->size / VELO_NAME_MAX);
		break;
	case CONFIG_CIDRS:
		fprintf(out, "list of CIDRs, at most %zu", field->size / sizeof(struct velo_cidr));
		break;
	case CONFIG_CUSTOM:
		fprintf(out, "%s", field->type_doc);
		break;
	}
}

void config_doc_print(FILE *out)
{
	fprintf(out,
		"<!-- velod --config-reference: begin. Generated from velod/agent/config_fields.c "
		"by `make docs`; edit the table there. -->\n"
		"## Config file (JSON; every key optional, unknown keys are errors)\n\n"
		"| key | type | default | meaning |\n"
		"|---|---|---|---|\n");
	for (unsigned i = 0; i < config_fields_count; i++) {
		const struct config_field *field = &config_fields[i];

		fprintf(out, "| `%s`", field->key);
		if (field->alias)
			fprintf(out, " / `%s`", field->alias);
		fprintf(out, " | ");
		print_type(out, field);
		if (field->value)
			fprintf(out, " | `%s` | %s |\n", field->value, field->doc);
		else
			fprintf(out, " | %s | %s |\n", field->default_doc, field->doc);
	}
	fprintf(out, "\n<!-- velod --config-reference: end -->\n");
}

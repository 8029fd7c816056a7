#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# docs/velod.md's config reference is velod's key table (velod/agent/config_fields.c), as
# `velod --config-reference` prints it between two marker lines. This script puts that output
# between the markers in the doc (`make docs`), or with --check fails, showing the diff, when
# the doc's section differs from it (tests/layout/velod_config_doc.bats).
#
# Usage: hack/velod-config-doc.sh [--check] VELOD [DOC]   (DOC: default docs/velod.md)
set -euo pipefail

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -ge 1 ] || {
	echo "usage: $0 [--check] VELOD [DOC]" >&2
	exit 2
}
velod=$1
doc=${2:-"$(dirname "$0")/../docs/velod.md"}
begin='^<!-- velod --config-reference: begin'
end='^<!-- velod --config-reference: end'

generated=$(mktemp /tmp/velotest-config-doc.XXXXXX)
trap 'rm -f "$generated" "$generated.doc"' EXIT
"$velod" --config-reference >"$generated"
for marker in "$begin" "$end"; do
	if [ "$(grep -c -- "$marker" "$doc")" -ne 1 ]; then
		echo "$doc: needs exactly one line matching '$marker'" >&2
		exit 1
	fi
done

# The doc with its section replaced by the generated one.
awk -v begin="$begin" -v end="$end" -v generated="$generated" '
	$0 ~ begin { while ((getline line < generated) > 0) print line; skip = 1; next }
	$0 ~ end { skip = 0; next }
	!skip { print }
' "$doc" >"$generated.doc"

if [ "$check" -eq 1 ]; then
	if ! diff -u "$doc" "$generated.doc"; then
		echo "$doc: the config reference differs from velod's key table; run make docs" >&2
		exit 1
	fi
	echo "$doc: the config reference matches velod's key table"
	exit 0
fi
cat "$generated.doc" >"$doc"

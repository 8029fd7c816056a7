#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# docs/velod.md's config reference is velod's key table (velod/agent/config_fields.c): the doc's section
# between its markers is exactly what `velod --config-reference` prints (`make docs` writes it),
# and hack/velod-config-doc.sh --check fails, showing the difference, on a scratch copy of the
# doc edited by hand. No root, no traffic.

# shellcheck disable=SC2016 # markdown's backticks are literal
REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
VELOD="${BUILD:-$REPO/build}/velod"

setup() {
	[ -x "$VELOD" ] || skip "velod not built (make all)"
	VT=$(mktemp -d /tmp/velotest-config-doc.XXXXXX)
	cp "$REPO/docs/velod.md" "$VT/velod.md"
}

teardown() {
	[ -z "${VT:-}" ] || rm -rf "$VT"
}

@test "config doc: docs/velod.md's reference is velod's key table" {
	run "$REPO/hack/velod-config-doc.sh" --check "$VELOD" "$REPO/docs/velod.md"
	echo "$output"
	[ "$status" -eq 0 ]
	# Every key velod prints a row for is in the doc, with its default.
	run grep -c '^| `' "$REPO/docs/velod.md"
	[ "$output" -ge 36 ]
	grep -qF '| `reconcileIntervalSeconds` | seconds, 0 to 31536000 | `60` |' "$REPO/docs/velod.md"
}

@test "config doc: a hand edit of the reference fails the check and make docs' rewrite undoes it" {
	sed -i 's/^| `gracePeriodSeconds` | \(.*\) | `120` |/| `gracePeriodSeconds` | \1 | `90` |/' "$VT/velod.md"
	grep -qF '`90`' "$VT/velod.md"
	run "$REPO/hack/velod-config-doc.sh" --check "$VELOD" "$VT/velod.md"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'-| `gracePeriodSeconds` |'*'`90`'* ]]
	[[ "$output" == *'+| `gracePeriodSeconds` |'*'`120`'* ]]
	[[ "$output" == *"differs from velod's key table; run make docs"* ]]
	run "$REPO/hack/velod-config-doc.sh" "$VELOD" "$VT/velod.md"
	[ "$status" -eq 0 ]
	cmp "$REPO/docs/velod.md" "$VT/velod.md"
}

@test "config doc: a key missing from the doc's section, or a lost marker, fails the check" {
	sed -i '/^| `logLevel` |/d' "$VT/velod.md"
	run "$REPO/hack/velod-config-doc.sh" --check "$VELOD" "$VT/velod.md"
	[ "$status" -eq 1 ]
	[[ "$output" == *'+| `logLevel` |'* ]]
	cp "$REPO/docs/velod.md" "$VT/velod.md"
	sed -i '/^<!-- velod --config-reference: end/d' "$VT/velod.md"
	run "$REPO/hack/velod-config-doc.sh" --check "$VELOD" "$VT/velod.md"
	[ "$status" -eq 1 ]
	[[ "$output" == *"needs exactly one line matching"* ]]
}

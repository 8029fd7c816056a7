#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# hack/check-bats.sh: bats ignores a failure of all but the last command of an && list, so a
# test with `a && b` in its middle passes when a fails. The check passes on the tree and fails,
# naming file:line, on a scratch copy with one such line planted. No root, no traffic.

# shellcheck disable=SC2016 # the planted shell text is literal
REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"

setup() {
	VT=$(mktemp -d /tmp/velotest-bats.XXXXXX)
	cp -r "$REPO/tests" "$VT/"
}

teardown() {
	rm -rf "$VT"
}

@test "check-bats: no test of the tree has an && list in its middle" {
	run "$REPO/hack/check-bats.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "check-bats: no && list mid-test in "*" files" ]]
}

@test "check-bats: a planted mid-test && list fails, naming its file and line" {
	local f="$VT/tests/node/cni/connectivity.bats" line
	line="$(grep -n 'vt_pod_add b ip_b "$conf" ctr-b 6' "$f" | head -n 1 | cut -d: -f1)"
	[ -n "$line" ]
	sed -i "${line}a\\	[ -n \"\$ip_a\" ] && [ -n \"\$ip_b\" ]" "$f"
	sed -n "$((line + 1))p" "$f" | grep -qxF '	[ -n "$ip_a" ] && [ -n "$ip_b" ]'
	run "$REPO/hack/check-bats.sh" "$VT/tests"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(grep -c 'mid-test' <<<"$output")" -eq 1 ]
	grep -q "^$f:$((line + 1)): " <<<"$output"
}

@test "check-bats: fallbacks that fail, negative assertions, loop breaks, [[ ]] and a test's last line pass" {
	# (@TEST: bats would take an @test line here for one of its own.)
	sed 's/^@TEST/@test/' >"$VT/ok.bats" <<'BATS'
@TEST "fine" {
	[ -n "$a" ] && [ -n "$b" ] || { echo "no a or b"; false; }
	has_link x && { echo "link left"; false; }
	for i in 1 2; do [ -s f ] && break; sleep 0.1; done
	[[ $a == x && $b == y ]]
	if [ -n "$a" ] && [ -n "$b" ]; then echo both; fi
	x="$(cd / && pwd)"
	echo "a && b"
	[ -n "$a" ] && [ -n "$b" ]
}
BATS
	run "$REPO/hack/check-bats.sh" "$VT/ok.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	printf '@%s "bad" {\n\t[ -n "$a" ] && [ -n "$b" ] || true\n\ttrue\n}\n' test >"$VT/bad.bats"
	run "$REPO/hack/check-bats.sh" "$VT/bad.bats"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q "^$VT/bad.bats:2: " <<<"$output"
}

@test "node tests give velo runtimeConfig only as libcni does: filtered by the shipped conflist's capabilities" {
	local hits
	# vt_runtime_config (lib.bash) and bandwidth.bats' chain apply libcni's filter; any other
	# assignment is a runtimeConfig no runtime under the shipped conflist would pass.
	hits="$(grep -nE '\.runtimeConfig *(=[^=]|\[)' "$REPO"/tests/node/*/*.bats \
		"$REPO"/tests/node/*/*.bash |
		grep -vF 'with_entries(select($caps[.key] == true))' |
		grep -vF '.runtimeConfig = $rc' || true)"
	echo "$hits"
	[ -z "$hits" ]
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Bad input: each case fails with the spec's error JSON and its code, and leaves
# nothing behind (no veth, lease, record, or pod interface). VERSION output.

load ../lib/lib

# bad_add CODE REGEX CONFIG [VAR=VALUE | -u VAR]...: ADD in a fresh pod must fail so.
bad_add() {
	local code="$1" regex="$2" config="$3" pod
	shift 3
	pod="$(vt_pod_new)"
	vt_cni ADD ctr-bad "$pod" eth0 "$config" "$@"
	echo "case: code $code /$regex/ $*"
	vt_assert_error "$code" "$regex"
	vt_assert_nothing_left
	if vt_pod "$pod" ip link show eth0 >/dev/null 2>&1; then
		echo "pod eth0 was created"
		return 1
	fi
}

@test "missing or invalid CNI_* variables fail with code 4 naming the variable" {
	local conf
	conf="$(vt_config -f dual)"
	# (The reference plugins print an "about" text and exit 0 without CNI_COMMAND.)
	if vt_is_velo; then bad_add 4 CNI_COMMAND "$conf" -u CNI_COMMAND; fi
	bad_add 4 CNI_COMMAND "$conf" CNI_COMMAND=FROB
	bad_add 4 CNI_CONTAINERID "$conf" -u CNI_CONTAINERID
	bad_add 4 CNI_NETNS "$conf" -u CNI_NETNS
	bad_add 4 CNI_IFNAME "$conf" -u CNI_IFNAME
	bad_add 4 CNI_PATH "$conf" -u CNI_PATH
}

@test "invalid CNI_CONTAINERID, CNI_IFNAME and CNI_ARGS fail with code 4 naming them" {
	vt_velo_only
	local conf
	conf="$(vt_config -f dual)"
	bad_add 4 CNI_CONTAINERID "$conf" CNI_CONTAINERID=../../etc
	bad_add 4 CNI_IFNAME "$conf" CNI_IFNAME=eth0123456789abcdef
	bad_add 4 CNI_IFNAME "$conf" CNI_IFNAME=eth/0
	bad_add 4 CNI_ARGS "$conf" "CNI_ARGS=NOEQUALSIGN"
}

@test "undecodable JSON fails with code 6" {
	bad_add 6 "" '{"cniVersion": "1.0.0", "name": '
	bad_add 6 "" 'not json at all'
}

@test "an unsupported cniVersion fails with code 1" {
	bad_add 1 "" "$(vt_config | jq -c '.cniVersion = "9.9.9"')"
}

@test "configs of versions velo does not speak (0.2.0, "1.0") fail with code 1" {
	vt_velo_only
	bad_add 1 "" "$(vt_config | jq -c '.cniVersion = "0.2.0"')"
	bad_add 1 "" "$(vt_config | jq -c '.cniVersion = "1.0"')"
}

@test "fields of the wrong type or value fail with code 7 naming the field" {
	vt_velo_only
	local conf
	conf="$(vt_config -f dual)"
	bad_add 7 mtu "$(jq -c '.mtu = "1500"' <<<"$conf")"
	bad_add 7 mtu "$(jq -c '.mtu = -1' <<<"$conf")"
	bad_add 7 vethPrefix "$(jq -c '.vethPrefix = 5' <<<"$conf")"
	bad_add 7 vethPrefix "$(jq -c '.vethPrefix = "toolong"' <<<"$conf")"
	bad_add 7 ipam "$(jq -c 'del(.ipam)' <<<"$conf")"
	bad_add 7 ipam "$(jq -c '.ipam = "host-local"' <<<"$conf")"
	bad_add 7 stateDir "$(jq -c '.stateDir = "relative/state"' <<<"$conf")"
	bad_add 7 logLevel "$(jq -c '.logLevel = "loud"' <<<"$conf")"
	bad_add 7 name "$(jq -c 'del(.name)' <<<"$conf")"
	bad_add 7 name "$(jq -c '.name = 7' <<<"$conf")"
}

@test "an unknown velo.dev/ annotation value fails with code 108 naming it" {
	vt_velo_only
	local conf
	conf="$(vt_annotated "$(vt_config -f dual)" '{"velo.dev/fastpath": "fast", "other.io/x": "y"}')"
	bad_add 108 'velo.dev/fastpath' "$conf"
	bad_add 108 'fast' "$conf"
}

@test "a failing IPAM plugin fails ADD and leaves nothing behind" {
	vt_velo_only
	local conf
	# A range with no free address: host-local fails after velo started the ADD.
	conf="$(vt_config -f 4 | jq -c '.ipam.ranges[0][0] += {rangeStart: "10.99.0.5", rangeEnd: "10.99.0.5"}')"
	vt_add "$(vt_pod_new)" ctr-first "$conf"
	vt_cni ADD ctr-second "$(vt_pod_new)" eth0 "$conf"
	vt_assert_error 101
	[ "$(vt_leases)" = 10.99.0.5 ] || { echo "leases: $(vt_leases)"; false; }
	[ "$(vt_host_links)" = "$(vt_host_ifname vt ctr-first eth0)" ] ||
		{ echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_records)" = "$VT_NETWORK/ctr-first:eth0.json" ] || { echo "records: $(vt_records)"; false; }
	# An IPAM plugin that isn't on CNI_PATH.
	vt_cni ADD ctr-third "$(vt_pod_new)" eth0 "$(jq -c '.ipam.type = "no-such-ipam"' <<<"$conf")"
	vt_assert_failed
	[ "$(vt_host_links)" = "$(vt_host_ifname vt ctr-first eth0)" ] ||
		{ echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_records)" = "$VT_NETWORK/ctr-first:eth0.json" ] || { echo "records: $(vt_records)"; false; }
}

@test "a second interface of a velo network in one pod is refused with code 104 before any effect" {
	vt_velo_only
	local conf pod ip4 leases
	conf="$(vt_config -i velo -f dual)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-two "$conf"
	ip4="$(vt_ip "$VT_RESULT" 4)"
	leases="$(vt_leases | sort)"
	# The same container, a second CNI_IFNAME on the same network (CNI allows several).
	vt_cni ADD ctr-two "$pod" eth1 "$conf"
	vt_assert_error 104 "already has an interface wired by velo.*one interface per pod netns.*eth1"
	# Nothing happened: no eth1, no second host veth, no lease, no record; eth0 still works.
	run vt_pod "$pod" ip link show eth1
	[ "$status" -ne 0 ]
	[ "$(vt_host_links)" = "$(vt_host_ifname vt ctr-two eth0)" ] ||
		{ echo "host links: $(vt_host_links)"; false; }
	[ "$(vt_leases | sort)" = "$leases" ] || { echo "leases: $(vt_leases)"; false; }
	[ "$(vt_records)" = "$VT_NETWORK/ctr-two:eth0.json" ] || { echo "records: $(vt_records)"; false; }
	vt_ping_from_node "$ip4"
	# Another container id in the same netns, likewise.
	vt_cni ADD ctr-three "$pod" eth1 "$conf"
	vt_assert_error 104 "one interface per pod netns"
	vt_cni DEL ctr-two "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "errors answer in the config's cniVersion" {
	vt_velo_only
	local version pod
	for version in 0.3.1 0.4.0 1.0.0 1.1.0; do
		pod="$(vt_pod_new)"
		vt_cni ADD ctr-ver "$pod" eth0 "$(vt_config -v "$version")" -u CNI_IFNAME
		vt_assert_error 4 CNI_IFNAME
		[ "$(jq -r .cniVersion <<<"$VT_OUT")" = "$version" ] || { echo "$VT_OUT"; false; }
	done
}

@test "VERSION lists the supported versions, needing only CNI_COMMAND" {
	vt_cni_env '{"cniVersion": "1.0.0"}' CNI_COMMAND=VERSION
	vt_assert_ok
	echo "$VT_OUT"
	jq -e '(.cniVersion | type) == "string" and
		(.supportedVersions | index("0.3.1") and index("0.4.0") and index("1.0.0"))' \
		<<<"$VT_OUT" >/dev/null
	if vt_is_velo; then
		# Answered in the request's version, one velo speaks.
		jq -e '.cniVersion == "1.0.0" and (.supportedVersions | index("1.1.0"))' \
			<<<"$VT_OUT" >/dev/null
	fi
	# With no config on stdin at all.
	vt_cni_env '' CNI_COMMAND=VERSION
	vt_assert_ok
	jq -e '.supportedVersions | length > 0' <<<"$VT_OUT" >/dev/null
}

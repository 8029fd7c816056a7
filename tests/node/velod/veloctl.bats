#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# veloctl against pods wired by the real plugin: JSON output has the fields
# docs/veloctl.md documents, errors are JSON in -j mode, top sees velo's
# programs run while traffic flows, bugtool collects what it promises.
# veloctl runs in the test's node netns, like an operator on the node.

load ../lib/lib

setup() {
	vt_setup_velo
	vt_need_veloctl VC_BIN
	VC_BPFFS=""
}
teardown() {
	local pid
	for pid in "${VT_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	vt_teardown
	if [ -n "${VC_BPFFS:-}" ]; then rm -rf "$VC_BPFFS"; fi
}

# vc [ARGS...]: veloctl in the node with this test's paths; sets VC_RC, VC_OUT.
vc() {
	VC_RC=0
	VC_OUT="$(vt_node "$VC_BIN" --state-dir "$VT/state" --run-dir "$VT/run" \
		--log-file "$VT_LOG" --bpffs "${VC_BPFFS:-$VT/bpffs-unused}" "$@" 2>"$VT/work/vc.err")" ||
		VC_RC=$?
}

vc_show() {
	echo "veloctl rc=$VC_RC"
	echo "stdout: $VC_OUT"
	echo "stderr: $(cat "$VT/work/vc.err")"
}

@test "veloctl --help works at every level; bad usage exits 2 with a JSON error under -j" {
	local cmd
	vc --help
	[ "$VC_RC" -eq 0 ] && grep -q '^  top ' <<<"$VC_OUT" || { vc_show; false; }
	for cmd in status endpoints top bugtool; do
		vc "$cmd" --help
		[ "$VC_RC" -eq 0 ] && grep -q "^Usage: veloctl $cmd" <<<"$VC_OUT" || { vc_show; false; }
		vc help "$cmd"
		[ "$VC_RC" -eq 0 ] && grep -q "^Usage: veloctl $cmd" <<<"$VC_OUT" || { vc_show; false; }
	done
	vc -j frobnicate
	[ "$VC_RC" -eq 2 ] || { vc_show; false; }
	jq -e '(keys == ["error"]) and (.error | test("frobnicate"))' <<<"$VC_OUT" >/dev/null ||
		{ vc_show; false; }
	vc -j top -i nonsense
	[ "$VC_RC" -eq 2 ] && jq -e '.error | test("interval")' <<<"$VC_OUT" >/dev/null ||
		{ vc_show; false; }
	vc frobnicate
	[ "$VC_RC" -eq 2 ] && [ -z "$VC_OUT" ] && grep -q '^Error: ' "$VT/work/vc.err" ||
		{ vc_show; false; }
}

@test "veloctl -j endpoints lists each pod with the documented fields and its netns state" {
	local conf a b result_a ip_a out
	conf="$(vt_config -f dual)"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	vt_add "$a" ctr-ep-a "$conf"
	result_a="$VT_RESULT"
	ip_a="$(vt_ip "$VT_RESULT" 4)"
	vt_add "$b" ctr-ep-b "$conf"

	vc -j endpoints
	[ "$VC_RC" -eq 0 ] || { vc_show; false; }
	out="$VC_OUT"
	jq -e 'type == "array" and length == 2 and all(.[];
		(.network | type) == "string" and (.containerId | type) == "string" and
		(.ifname | type) == "string" and (.podNamespace | type) == "string" and
		(.podName | type) == "string" and (.podUid | type) == "string" and
		(.netns | type) == "string" and (.netnsIno | type) == "number" and
		(.hostIfname | type) == "string" and (.hostIfindex | type) == "number" and
		(.hostMac | type) == "string" and (.podMac | type) == "string" and
		(.phase | type) == "string" and (.created | type) == "number" and
		(.ips | type) == "array" and all(.ips[]; type == "string") and
		(.featureBits | type) == "number" and (.features | type) == "array" and
		(.netnsState | IN("alive", "gone", "unknown")))' <<<"$out" >/dev/null ||
		{ echo "$out"; false; }
	jq -e --arg net "$VT_NETWORK" --arg host "$(vt_host_ifname vt ctr-ep-a eth0)" \
		--arg ns "/run/netns/$a" --argjson ips "$(jq -c '[.ips[].address]' <<<"$result_a")" '
		[.[] | select(.containerId == "ctr-ep-a")] | length == 1 and (.[0] |
		.network == $net and .ifname == "eth0" and .hostIfname == $host and
		.netns == $ns and .phase == "ready" and .netnsState == "alive" and
		.podNamespace == "velotest" and .podName == "pod-ctr-ep-a" and
		(.ips | sort) == ($ips | sort))' <<<"$out" >/dev/null || { echo "$out"; false; }

	# Text mode: one header and one line per pod.
	vc endpoints
	[ "$VC_RC" -eq 0 ] && [ "$(wc -l <<<"$VC_OUT")" -eq 3 ] && grep -q "$ip_a" <<<"$VC_OUT" ||
		{ vc_show; false; }

	ip netns del "$a"
	vc -j --network "$VT_NETWORK" endpoints
	jq -e '[.[] | select(.containerId == "ctr-ep-a")][0].netnsState == "gone" and
		[.[] | select(.containerId == "ctr-ep-b")][0].netnsState == "alive"' \
		<<<"$VC_OUT" >/dev/null || { vc_show; false; }
}

@test "veloctl -j status reports kernel features, programs, maps and endpoints; exit 3 when velod is unreachable" {
	local conf pod
	conf="$(vt_config -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-st "$conf"

	vc -j status --agent ""
	[ "$VC_RC" -eq 0 ] || { vc_show; false; }
	jq -e --arg net "$VT_NETWORK" '
		(.kernel.release | type) == "string" and (.kernel.bpffsMounted | type) == "boolean" and
		(.kernel.bpfStatsSysctl | type) == "boolean" and
		(.kernel.features | keys) == (["bpfStats", "checkMtu", "devmapPrograms",
			"sockmap", "sockmapPermanent", "sockmapPermanentInBtf", "tcRedirectPeer",
			"tcx", "xdpNativeVeth"]) and
		all(.kernel.features[]; type == "boolean") and .kernel.features.bpfStats == true and
		(.programs | type) == "array" and
		all(.programs[]; (.id | type) == "number" and (.name | startswith("velo_")) and
			(.type | type) == "string" and (.runCount | type) == "number" and
			(.runTimeNs | type) == "number") and
		(.maps | type) == "array" and
		all(.maps[]; (.name | startswith("velo_")) and (.maxEntries | type) == "number" and
			((.entries | type) == "number" or .entries == null)) and
		.endpoints.total == 1 and .endpoints.ready == 1 and .endpoints.netnsGone == 0 and
		.endpoints.byNetwork[$net] == 1 and .agent == {}' <<<"$VC_OUT" >/dev/null ||
		{ vc_show; false; }

	# Nothing listens on this port in the node netns.
	vc -j status --agent 127.0.0.1:19098
	[ "$VC_RC" -eq 3 ] || { vc_show; false; }
	jq -e '.agent.address == "127.0.0.1:19098" and .agent.healthy == false and
		(.agent.error | type) == "string"' <<<"$VC_OUT" >/dev/null || { vc_show; false; }

	vc status --agent ""
	[ "$VC_RC" -eq 0 ] && grep -q '^Endpoints: 1 ' <<<"$VC_OUT" || { vc_show; false; }
}

@test "veloctl status shows this build's BPF generation, pinned, and an older one beside it" {
	local conf pod gen
	VC_BPFFS="/sys/fs/bpf/velotest-$VT_TAG-$BATS_TEST_NUMBER"
	conf="$(vt_config -f 4 | jq -c --arg b "$VC_BPFFS" \
		'.bpffsDir = $b | .defaults = {"velo.dev/fastpath": "tc"}')"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-gen "$conf"
	gen="$(cd "$VC_BPFFS" && echo progs_g*)"
	gen="${gen#progs_g}"
	[ -d "$VC_BPFFS/progs_g$gen" ] || { echo "no generation dir under $VC_BPFFS"; false; }

	vc -j status --agent ""
	[ "$VC_RC" -eq 0 ] || { vc_show; false; }
	jq -e --arg g "$gen" '.bpfGenerations == {build: $g, pinned: [$g]}' <<<"$VC_OUT" ||
		{ vc_show; false; }
	# An older build's programs still pinned (an upgrade under way).
	mkdir "$VC_BPFFS/progs_g0123456789ab"
	vc -j status --agent ""
	jq -e --arg g "$gen" '.bpfGenerations.build == $g and
		(.bpfGenerations.pinned | sort) == ([$g, "0123456789ab"] | sort)' <<<"$VC_OUT" ||
		{ vc_show; false; }
	vc status --agent ""
	grep -q "0123456789ab (other build" <<<"$VC_OUT" || { vc_show; false; }
	grep -q "$gen (this build)" <<<"$VC_OUT" || { vc_show; false; }
}

@test "veloctl status finds a running velod healthy" {
	local vd="${VELOD_BIN:-$VELOTEST_REPO/build/velod}" pid i
	[ -x "$vd" ] || skip "velod not built"
	jq -n --arg t "$VT" '{stateDir: ($t + "/state"), runDir: ($t + "/run"),
		listen: "127.0.0.1:19097", reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0}' \
		>"$VT/velod.json"
	nsenter --net="/run/netns/$VT_NODE" "$vd" --config "$VT/velod.json" 2>"$VT/velod.log" &
	pid=$!
	VT_PIDS+=("$pid")
	for i in $(seq 50); do
		vc -j status --agent 127.0.0.1:19097
		[ "$VC_RC" -eq 0 ] && break
		sleep 0.1
	done
	[ "$VC_RC" -eq 0 ] && jq -e '.agent.healthy == true' <<<"$VC_OUT" >/dev/null ||
		{ vc_show; cat "$VT/velod.log"; false; }
}

@test "veloctl bugtool writes one archive with configs, logs, state, ip/tc and bpftool dumps" {
	local conf pod list
	conf="$(vt_config -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-bug "$conf"
	mkdir -p "$VT/netd"
	jq -n --argjson p "$conf" '{cniVersion: "1.0.0", name: "velotest", plugins: [$p]}' \
		>"$VT/netd/10-velotest.conflist"

	vc -j bugtool --agent "" --cni-conf-dir "$VT/netd" -o "$VT/bug.tar.gz"
	[ "$VC_RC" -eq 0 ] || { vc_show; false; }
	jq -e --arg a "$VT/bug.tar.gz" '.archive == $a' <<<"$VC_OUT" >/dev/null || { vc_show; false; }
	list="$(tar -tzf "$VT/bug.tar.gz")"
	for want in "files$VT/netd/10-velotest.conflist" "files$VT_LOG" \
		"files$VT/state/$VT_NETWORK/ctr-bug:eth0.json" commands/ip-link.txt \
		commands/ip-route.txt commands/ip-neigh.txt commands/ip-addr.txt \
		commands/tc-filter.txt commands/veloctl-status.json commands/veloctl-endpoints.json \
		commands/veloctl-sockets.json; do
		grep -q -- "/$want\$" <<<"$list" || { echo "missing $want in:"; echo "$list"; false; }
	done
	if command -v bpftool >/dev/null; then
		grep -q '/commands/bpftool-prog.json$' <<<"$list" || { echo "$list"; false; }
	fi
	# The node's veth for the pod is in the archived link dump.
	tar -xzOf "$VT/bug.tar.gz" --wildcards '*/commands/ip-link.txt' |
		grep -q "$(vt_host_ifname vt ctr-bug eth0)"
	tar -xzOf "$VT/bug.tar.gz" --wildcards '*/commands/veloctl-endpoints.json' | sed 1d |
		jq -e 'length == 1 and .[0].containerId == "ctr-bug"' >/dev/null
}

@test "veloctl top shows velo's tc program with runs while traffic flows and none after" {
	local conf a b ip_b id out ping_pid
	command -v bpftool >/dev/null || skip "bpftool not installed"
	VC_BPFFS="/sys/fs/bpf/velotest-$VT_TAG-$BATS_TEST_NUMBER"
	conf="$(vt_config -f 4 | jq -c --arg b "$VC_BPFFS" \
		'.bpffsDir = $b | .defaults = {"velo.dev/fastpath": "tc"}')"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	vt_add "$a" ctr-top-a "$conf"
	vt_add "$b" ctr-top-b "$conf"
	ip_b="$(vt_ip "$VT_RESULT" 4)"
	id="$(bpftool -j prog show pinned "$VC_BPFFS"/progs_g*/velo_tc_ingress 2>/dev/null |
		jq -r '.id // empty')"
	# The pods asked for the tc fast path: velo must have pinned its program.
	[ -n "$id" ] || { echo "no velo_tc_ingress pinned under $VC_BPFFS"; ls -R "$VC_BPFFS"; false; }

	vt_pod "$a" "${VT_PING[@]}" -q -i 0.01 -c 400 "$ip_b" >/dev/null 2>&1 &
	ping_pid=$!
	VT_PIDS+=("$ping_pid")
	sleep 0.5
	vc -j top -i 2
	[ "$VC_RC" -eq 0 ] || { vc_show; false; }
	out="$VC_OUT"
	jq -e --argjson id "$id" '(.intervalSeconds >= 1.9) and (.cpus >= 1) and
		([.programs[] | select(.id == $id)] | length == 1 and (.[0] |
		.name == "velo_tc_ingress" and .runs > 50 and .runsPerSecond > 25 and
		.nsPerRun > 0 and .cpuPercent > 0))' <<<"$out" >/dev/null || { echo "$out"; false; }
	wait "$ping_pid" || true

	vc -j top -i 1
	jq -e --argjson id "$id" '[.programs[] | select(.id == $id)][0].runs == 0' \
		<<<"$VC_OUT" >/dev/null || { vc_show; false; }
	# Text mode names the program too.
	vc top -i 0.5 -n 1
	[ "$VC_RC" -eq 0 ] && grep -q "^$id .*velo_tc_ingress" <<<"$VC_OUT" || { vc_show; false; }
}

@test "veloctl observe and policy ask velod's local socket: --socket, else VELOD_SOCKET, else RUN_DIR/velod.sock" {
	vc observe
	[ "$VC_RC" -eq 1 ] || { vc_show; false; }
	grep -q "velod at $VT/run/velod.sock: No such file or directory" "$VT/work/vc.err"
	vc --socket "$VT/other.sock" policy
	[ "$VC_RC" -eq 1 ] || { vc_show; false; }
	grep -q "velod at $VT/other.sock: No such file or directory" "$VT/work/vc.err"
	VELOD_SOCKET="$VT/env.sock" vc -j observe
	[ "$VC_RC" -eq 1 ] || { vc_show; false; }
	jq -e --arg s "$VT/env.sock" '.error | contains($s)' <<<"$VC_OUT"
	# --socket wins over VELOD_SOCKET.
	VELOD_SOCKET="$VT/env.sock" vc --socket "$VT/other.sock" observe
	grep -q "velod at $VT/other.sock:" "$VT/work/vc.err"
	# A relative path, or nothing at all to ask, is a usage error.
	vc --socket velod.sock observe
	[ "$VC_RC" -eq 2 ] || { vc_show; false; }
	VELOD_SOCKET=velod.sock vc policy
	[ "$VC_RC" -eq 2 ] || { vc_show; false; }
	vc --socket "" --agent "" observe
	[ "$VC_RC" -eq 2 ] || { vc_show; false; }
	vc --socket "" --agent "" policy
	[ "$VC_RC" -eq 2 ] || { vc_show; false; }
}

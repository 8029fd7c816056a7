#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy's one switch (docs/policy.md, "Turning it on"): velod's policySource turns
# policy on and off for velod and the plugin together. Turned on in a running node, it enforces
# the pods wired before (no new ADD), whatever their records say; turned off, no policy
# program is left on any veth or the uplink; ADD follows the switch, whatever the conflist says.
# With an API client velod takes the Service ranges from the API's ServiceCIDRs (fake API
# server, k8s_fake_api.bash) and follows them; a server that doesn't serve them holds nothing up.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib
load ../lib/k8s_fake_api

# shellcheck disable=SC2034 # k8s_fake_api.bash listens on it
K8_PORT=16443

# x/a isolated for ingress: nothing may reach it.
DENY_XA='{"podSelector": {"matchLabels": {"pod": "a"}}, "policyTypes": ["Ingress"]}'
# y's pods isolated for egress: only namespace x.
EGRESS_Y='{"podSelector": {}, "policyTypes": ["Egress"],
	"egress": [{"to": [{"namespaceSelector": {"matchLabels": {"ns": "x"}}}]}]}'

setup() {
	pol_setup
	command -v bpftool >/dev/null || skip "bpftool not installed"
}

ps_velod_stop() {
	kill "$POL_VELOD_PID"
	wait "$POL_VELOD_PID" || true
	POL_VELOD_PID=
}

# ps_velod CONFIG_JSON: velod in the node with the test's paths and CONFIG_JSON's fields;
# waits (10 s) for /healthz.
ps_velod() {
	local _
	mkdir -p "$VT/run"
	jq -n --arg t "$VT" --arg b "$VTC_BPFFS" --arg n "$POL_NODE_NAME" \
		--arg l "127.0.0.1:$POL_PORT" --argjson extra "$1" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", nodeName: $n, logLevel: "debug", policySyncMs: 50} + $extra' \
		>"$VT/velod.json"
	nsenter --net="/run/netns/$VT_NODE" "$POL_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	POL_VELOD_PID=$!
	for _ in $(seq 200); do
		vt_node curl -sf --max-time 1 "http://127.0.0.1:$POL_PORT/healthz" >/dev/null &&
			return 0
		kill -0 "$POL_VELOD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "velod not healthy:"
	tail -n 15 "$VT/velod.log"
	return 1
}

# ps_probe SRC_KEY DST_KEY: "ok" or "timeout" for TCP 80 from one grid pod to another.
ps_probe() {
	vtc_run "${POL_NS[$1]}" "${POL_CG[$1]}" "$POL_PROBE" probe -t 1000 \
		<<<"p tcp ${POL_IP[$2]} 80" | awk '{print $2}'
}

# ps_pins: the policy link pins under bpffs (names), one a line.
ps_pins() { ls "$VTC_BPFFS/links" 2>/dev/null | grep '_pol_' || true; }

# ps_tcx_ids: "IFNAME PROG_ID" for every program on a node device's tcx hooks (BPF_PROG_QUERY:
# Debian's bpftool 7.1 predates tcx and shows none of them).
ps_tcx_ids() {
	vt_node ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $1, $2}' |
		vt_node python3 -c '
import ctypes, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
NR_BPF, PROG_QUERY, TCX_INGRESS, TCX_EGRESS = 321, 16, 46, 47
for line in sys.stdin:
    ifindex, name = line.split()
    ifindex = int(ifindex)
    for hook in (TCX_INGRESS, TCX_EGRESS):
        ids = (ctypes.c_uint32 * 64)()
        attr = ctypes.create_string_buffer(struct.pack("IIIIQI", ifindex, hook, 0, 0,
                                                       ctypes.addressof(ids), 64), 120)
        if libc.syscall(NR_BPF, PROG_QUERY, attr, 120) == 0:
            count = struct.unpack_from("I", attr.raw, 24)[0]
            for i in range(count):
                print(name, ids[i])
'
}

# ps_attached: velo_pol_* programs on the node's devices: tcx (by BPF_PROG_QUERY), tc clsact
# filters, XDP (bpftool net).
ps_attached() {
	local dev id
	while read -r dev id; do
		bpftool prog show id "$id" 2>/dev/null | grep -q velo_pol && echo "$dev tcx prog $id"
	done < <(ps_tcx_ids)
	vt_node bpftool net show 2>/dev/null | grep velo_pol
	for dev in $(vt_node ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'); do
		vt_node tc filter show dev "$dev" ingress 2>/dev/null | grep velo_pol
		vt_node tc filter show dev "$dev" egress 2>/dev/null | grep velo_pol
	done
	true
}

# ps_switch: what the switch file says ("" when there is none).
ps_switch() { cat "$VT/state/.policy-switch" 2>/dev/null || true; }

@test "policy switched on in a running node: pods wired while it was off are enforced without a new ADD; CHECK and DEL stay right" {
	local xa conf record result args="IgnoreUnknown=1;K8S_POD_NAMESPACE=x;K8S_POD_NAME=a"
	POL_CONFLIST_POLICY=0
	ps_velod '{}'
	pol_add x a '{}'
	result="$VT_OUT"
	pol_add y a '{}'
	xa="$(vt_host_ifname vt ctr-x-a eth0)"
	# Policy is off: nothing attached, y/a reaches x/a.
	[ -z "$(ps_pins)" ] || { echo "pins while off: $(ps_pins)"; false; }
	[ "$(ps_probe y/a x/a)" = ok ]
	# An older release's record: nothing in it says NetworkPolicy (bit 64 clear).
	record="$VT/state/velotest/ctr-x-a:eth0.json"
	jq -c '.features = (.features - ((.features / 64 | floor) % 2) * 64)' "$record" \
		>"$record.new"
	mv "$record.new" "$record"
	[ "$(jq '(.features / 64 | floor) % 2' "$record")" -eq 0 ]

	# Switched on: velod with a policy source and a policy isolating x/a. No ADD runs.
	ps_velod_stop
	pol_velod
	pol_apply "[$(pol_np x deny "$DENY_XA")]"
	[ -e "$VTC_BPFFS/links/${xa}_pol_from" ] || { echo "pins: $(ps_pins)"; cat "$VT/velod.log"; false; }
	[ -e "$VTC_BPFFS/links/${xa}_pol_to" ]
	run ps_probe y/a x/a
	echo "y/a -> x/a with x/a isolated: $output"
	[ "$output" = timeout ]
	# What veloctl shows is what the datapath does.
	run vt_node "$POL_CTL" --run-dir "$VT/run" policy
	echo "$output"
	grep -Eq '^x/a +isolated ' <<<"$output"
	[ "$(ps_probe x/a y/a)" = ok ]
	# A new pod of x, its conflist saying "policy": false, velod frozen: ADD attaches anyway
	# (some policy of x may select it) and the pod waits for velod.
	kill -STOP "$POL_VELOD_PID"
	pol_add x c '{}'
	kill -CONT "$POL_VELOD_PID"
	[ "$(jq -c .policy <<<"$(pol_conf '{}' "${POL_CG[x/c]}")")" = false ]
	[ -e "$VTC_BPFFS/links/$(vt_host_ifname vt ctr-x-c eth0)_pol_from" ] ||
		{ echo "pins: $(ps_pins)"; false; }

	# CHECK: velod's programs on a pod ADD didn't mark are no drift; half of them is.
	conf="$(pol_conf '{}' "${POL_CG[x/a]}")"
	vt_cni CHECK ctr-x-a "${POL_NS[x/a]}" eth0 "$(vt_with_prev "$conf" "$result")" \
		-u CNI_ARGS "CNI_ARGS=$args"
	vt_assert_ok
	rm "$VTC_BPFFS/links/${xa}_pol_to"
	vt_cni CHECK ctr-x-a "${POL_NS[x/a]}" eth0 "$(vt_with_prev "$conf" "$result")" \
		-u CNI_ARGS "CNI_ARGS=$args"
	vt_assert_error 106
	grep -q "policy: only the sending program is on $xa" <<<"$VT_OUT" || { vt_show; false; }
	# DEL takes velod's links off with the pod.
	vt_cni DEL ctr-x-a "${POL_NS[x/a]}" eth0 "$conf" -u CNI_ARGS "CNI_ARGS=$args"
	vt_assert_ok
	[ ! -e "$VTC_BPFFS/links/${xa}_pol_from" ] || { echo "pins after DEL: $(ps_pins)"; false; }
	[ ! -e "$VTC_BPFFS/links/${xa}_pol_to" ]
	# What velod said, where ADD reads it.
	[ "$(ps_switch)" = on ] || { echo "switch: $(ps_switch)"; false; }
}

@test "policy switched off: no velo_pol_* program on any pod or the uplink, and ADD attaches none whatever the conflist says" {
	local attached
	# An uplink inside the node (both ends there): the default route's device gets
	# velo_pol_uplink while a local pod's egress is isolated.
	vt_node ip link add vtupl0 type veth peer name vtupl1
	vt_node ip link set vtupl0 up
	vt_node ip link set vtupl1 up
	vt_node ip addr add 198.51.100.1/24 dev vtupl0
	vt_node ip route add default via 198.51.100.2 dev vtupl0
	pol_add x a '{}'
	pol_add y a '{}'
	pol_add z a '{}'
	pol_velod
	pol_apply "[$(pol_np x deny "$DENY_XA"), $(pol_np y egress "$EGRESS_Y")]"
	[ -e "$VTC_BPFFS/links/vtupl0_pol_uplink" ] || { echo "pins: $(ps_pins)"; false; }
	attached="$(ps_attached)"
	echo "$attached"
	[ -n "$attached" ]
	[ "$(ps_probe z/a x/a)" = timeout ]

	# Switched off.
	ps_velod_stop
	ps_velod '{}'
	run ps_pins
	echo "pins: $output"
	[ -z "$output" ]
	run ps_attached
	echo "attached: $output"
	[ -z "$output" ]
	[ ! -e "$VT/run/policy/namespaces" ]
	[ "$(ps_probe z/a x/a)" = ok ]
	[ "$(ps_probe y/a z/a)" = ok ]
	[ "$(ps_switch)" = off ]

	# A new pod with the conflist's "policy": true gets nothing either.
	pol_add x b '{}'
	run ps_pins
	echo "pins after a new ADD: $output"
	[ -z "$output" ]
	[ "$(ps_probe x/b x/a)" = ok ]
}

# ---------------------------------------------------------------- the Service ranges

# ps_api_objects: the grid's namespaces and pods, and this node, as the fake API serves them.
ps_api_objects() {
	local key
	k8_event ADDED "$POL_NODE_NAME" "$VT_NODE_ADDR4" "10.99.0.0/24"
	for ns in x y z; do
		k8_object ADDED "$(jq -cn --arg n "$ns" '{kind: "Namespace", apiVersion: "v1",
			metadata: {name: $n, labels: {ns: $n, "kubernetes.io/metadata.name": $n}}}')"
	done
	for key in "${POL_KEYS[@]}"; do
		k8_object ADDED "$(pol_pod_json "$key" | jq -c '. + {kind: "Pod", apiVersion: "v1"}')"
	done
}

# ps_servicecidr TYPE NAME CIDR...: a ServiceCIDR watch event.
ps_servicecidr() {
	local type="$1" name="$2"
	shift 2
	k8_object "$type" "$(jq -cn --arg n "$name" --args '{kind: "ServiceCIDR",
		apiVersion: "networking.k8s.io/v1", metadata: {name: $n},
		spec: {cidrs: $ARGS.positional}}' "$@")"
}

# ps_api_velod: velod with every source from the fake API, serviceCidrs 10.97.0.0/24 configured.
ps_api_velod() {
	ps_velod "$(jq -cn --arg k "$K8_API/kubeconfig" '{kubeconfig: $k, routeSyncSeconds: 300,
		policySource: "api", serviceCidrs: ["10.97.0.0/24"]}')"
}

# ps_ranges: the Service ranges velod's /policy shows, "configured: ...; api: ...".
ps_ranges() {
	vt_node curl -sf --max-time 5 --unix-socket "$VT/run/velod.sock" http://localhost/policy | jq -r \
		'"configured: \(.serviceCidrs.configured | join(" ")); api: \(.serviceCidrs.api // [] | join(" "))"'
}

# ps_service_flag IPV4: 1 when velo_pol_ip_v1 takes the address for a Service's (its
# VELO_POL_IP_SERVICE flag), 0 when not (or no entry holds it).
ps_service_flag() {
	local key out
	# LPM key: prefixlen 128 (little-endian u32), then ::ffff:a.b.c.d.
	key="128 0 0 0 0 0 0 0 0 0 0 0 0 0 255 255 $(tr . ' ' <<<"$1")"
	# shellcheck disable=SC2086 # the key is bytes
	out="$(bpftool -j map lookup pinned "$VTC_BPFFS/velo_pol_ip_v1" key $key 2>/dev/null)" ||
		{ echo 0; return; }
	jq -r '((.formatted.value.flags / 2 | floor) % 2)' <<<"$out"
}

# ps_wait_ranges EXPECTED: waits (10 s) until ps_ranges says EXPECTED.
ps_wait_ranges() {
	local _ got
	for _ in $(seq 100); do
		got="$(ps_ranges)"
		[ "$got" = "$1" ] && return 0
		sleep 0.1
	done
	echo "Service ranges: '$got', expected '$1'"
	tail -n 20 "$VT/velod.log"
	return 1
}

@test "Service ranges from the API's ServiceCIDRs, with serviceCidrs configured: in the maps, and a change followed" {
	command -v openssl >/dev/null || skip "openssl not installed"
	# shellcheck disable=SC2034 # the netns k8s_fake_api.bash's server listens in
	K8_NODE="$VT_NODE"
	K8_API="$VT/api"
	mkdir -p "$K8_API"
	k8_certs
	pol_add x a '{}'
	ps_api_objects
	ps_servicecidr ADDED kubernetes 10.96.0.0/16 fd00:10:96::/112
	k8_server
	ps_api_velod
	ps_wait_ranges "configured: 10.97.0.0/24; api: 10.96.0.0/16 fd00:10:96::/112"
	[ "$(ps_service_flag 10.96.3.4)" = 1 ]
	[ "$(ps_service_flag 10.97.0.9)" = 1 ]
	[ "$(ps_service_flag 10.98.0.9)" = 0 ]

	# A second range added, the first one's object changed: both followed.
	ps_servicecidr ADDED extra 10.98.0.0/16
	ps_servicecidr MODIFIED kubernetes 10.95.0.0/16
	ps_wait_ranges "configured: 10.97.0.0/24; api: 10.95.0.0/16 10.98.0.0/16"
	[ "$(ps_service_flag 10.98.0.9)" = 1 ]
	[ "$(ps_service_flag 10.95.0.9)" = 1 ]
	[ "$(ps_service_flag 10.96.3.4)" = 0 ]
	# Deleted: only what velod.json configures stays.
	ps_servicecidr DELETED kubernetes 10.95.0.0/16
	ps_servicecidr DELETED extra 10.98.0.0/16
	ps_wait_ranges "configured: 10.97.0.0/24; api: "
	[ "$(ps_service_flag 10.95.0.9)" = 0 ]
	[ "$(ps_service_flag 10.97.0.9)" = 1 ]
}

@test "Service ranges: an API server without ServiceCIDRs (404) or forbidding them (403) holds nothing up; configured ranges apply" {
	local what
	command -v openssl >/dev/null || skip "openssl not installed"
	# shellcheck disable=SC2034 # the netns k8s_fake_api.bash's server listens in
	K8_NODE="$VT_NODE"
	K8_API="$VT/api"
	mkdir -p "$K8_API"
	k8_certs
	pol_add x a '{}'
	ps_api_objects
	k8_object ADDED "$(pol_np x deny "$DENY_XA")"
	for what in unserved forbid; do
		: >"$K8_API/$what-servicecidrs"
		k8_server
		# Healthy (policy synced), the configured range in the maps, the reason in the log.
		ps_api_velod
		ps_wait_ranges "configured: 10.97.0.0/24; api: "
		[ "$(ps_service_flag 10.97.0.9)" = 1 ]
		grep -q "k8s servicecidrs: .*HTTP 40[34].*carrying on without them" "$VT/velod.log" ||
			{ tail -n 20 "$VT/velod.log"; false; }
		ps_velod_stop
		kill "${VT_PIDS[-1]}"
		wait "${VT_PIDS[-1]}" 2>/dev/null || true
		rm -f "$K8_API/$what-servicecidrs" "$K8_API/ready"
	done
}

# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# NetworkPolicy on the two simulated nodes of multinode_lib.bash (load after it): pods of
# namespace x wired with velo's "policy": true and the kubelet's CNI_ARGS, velod's policy file
# in Kubernetes' shapes, and a TCP connect probe.

# mnp_add N NAME [ANNOTATIONS_JSON]: pod x/NAME on node N with velo's "policy": true and the
# kubelet's CNI_ARGS (policy matches local pods by namespace/name); sets MN_POD, MN_IP4, MN_IP6.
mnp_add() {
	local out conf
	MN_POD="$(vt_pod_new)"
	conf="$(mn_config "$1" "${3:-}" | jq -c '.policy = true')"
	out="$(mn_in "$1" env -i PATH="$PATH" CNI_COMMAND=ADD CNI_CONTAINERID="ctr-$2" \
		CNI_NETNS="/run/netns/$MN_POD" CNI_IFNAME=eth0 CNI_PATH="$VT_BIN" \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=x;K8S_POD_NAME=$2;K8S_POD_INFRA_CONTAINER_ID=ctr-$2" \
		"$VT_BIN/velo" <<<"$conf")" || { echo "ADD $2: $out"; return 1; }
	# shellcheck disable=SC2034 # for the caller
	MN_IP4="$(vt_ip "$out" 4)"
	# shellcheck disable=SC2034
	MN_IP6="$(vt_ip "$out" 6)"
}

# mnp_pod NODE NAME IP4 IP6: a Pod object x/NAME (label pod=NAME) on node nNODE.
mnp_pod() {
	jq -cn --arg node "n$1" --arg n "$2" --arg a "$3" --arg b "$4" '{
		metadata: {namespace: "x", name: $n, labels: {pod: $n}},
		spec: {nodeName: $node, containers: [{name: "c"}]},
		status: {phase: "Running", podIP: $a, podIPs: [{ip: $a}, {ip: $b}]}}'
}

# mnp_file FILE PODS_JSON_ARRAY POLICIES_JSON_ARRAY: velod's policy file, namespace x.
mnp_file() {
	jq -cn --argjson pods "$2" --argjson pols "$3" '{
		namespaces: [{metadata: {name: "x", labels: {ns: "x"}}}],
		pods: $pods, networkPolicies: $pols}' >"$1.tmp"
	mv "$1.tmp" "$1"
}

# mnp_wait_syncs N COUNT: waits (10 s) until node N's velod synced its policy COUNT times.
mnp_wait_syncs() {
	local _ got
	for _ in $(seq 100); do
		got="$(mn_metric "$1" velo_policy_syncs_total)"
		[ -n "$got" ] && [ "${got%.*}" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "node $1's velod synced its policy ${got:-0} times, not $2"
	tail -n 20 "$VT/n$1/velod.log"
	return 1
}

# mnp_connect CLIENT_POD ADDR PORT: prints "ok" when a TCP connect succeeds within 5 s, else "no".
mnp_connect() {
	vt_pod "$1" timeout 30 python3 -c '
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()
    print("ok")
except OSError:
    print("no")
' "$2" "$3"
}

# mnp_wait_link N KIND: waits (5 s) for a policy link pin <bpffs>/links/*_KIND on node N.
mnp_wait_link() {
	local _
	for _ in $(seq 50); do
		compgen -G "$MN_BPFFS-n$1/links/*_$2" >/dev/null && return 0
		sleep 0.1
	done
	echo "node $1 has no $2 link: $(ls "$MN_BPFFS-n$1/links" 2>&1)"
	return 1
}

# mnp_serve NETNS ADDR PORT: a TCP server (60 s) in NETNS (a name under /run/netns) on ADDR.
mnp_serve() {
	local _ listen="TCP4-LISTEN:$3,bind=$2"
	case "$2" in *:*) listen="TCP6-LISTEN:$3,bind=[$2]" ;; esac
	nsenter --net="/run/netns/$1" timeout 300 socat "$listen,reuseaddr,fork" /dev/null &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$1" ss -Hltn "sport = :$3" | grep -q . && return 0
		sleep 0.1
	done
	echo "no server on $2:$3 in $1"
	return 1
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Egress NetworkPolicy through a ClusterIP whose backend is not a pod (multinode_lib.bash's two
# nodes; node 1 masquerades what its pods send outside the cluster, as the shipped velod does):
# a pod's veth sees only the Service IP, kube-proxy's DNAT chooses the backend afterwards, so
# velod judges the pod's flow at netfilter's forward and local-in hooks (velo_pol_nf), after the
# DNAT and before masquerade. kube-proxy's DNAT is emulated with nft rules in node 1.

load ../lib/lib
load ../lib/multinode_lib
load ../lib/mn_policy_lib

setup() {
	vt_setup
	mn_setup
}
teardown() { mn_teardown; }

# svc_dnat FAMILY VIP PORT BACKEND: node 1's kube-proxy DNAT of VIP:PORT to BACKEND (ip or ip6).
svc_dnat() {
	local to="$4:$3"
	[ "$1" = ip6 ] && to="[$4]:$3"
	mn_in 1 nft add rule inet velotest_kp svc "$1" daddr "$2" tcp dport "$3" dnat "$1" to "$to"
}

# egress_drops: x/p's egress drops on node 1 (a series per address, summed).
egress_drops() {
	mn_metric 1 'velo_policy_drops_total{pod="x/p",reason="egress"}' | awk '{ n += $1 } END { print n + 0 }'
}

@test "egress policy through ClusterIPs: a pod allowed only a pod peer can't reach a masqueraded backend outside the cluster, nor a backend on its own node outside the node's addresses; its peer, and the node itself, stay reachable" {
	local p p4 p6 q q4 q6 b b4 b6 pods pol before got drops out="velotest-mn-out-$VT_TAG"
	mkdir -p "$VT/n1" "$VT/n2"
	mn_underlay
	mn_nodes 2
	mnp_file "$VT/n1/policy.json" '[]' '[]'
	# Node 1 routes the rest of the world to the outside host (velo_pol_uplink's device).
	mn_in 1 ip route add default via 192.168.77.100 dev ul0
	mn_in 1 ip -6 route add default via fd00:77::100 dev ul0
	mn_velod 1 "$(jq -cn --arg f "$VT/n1/policy.json" '{policySource: "file", policyFile: $f,
		policySyncMs: 50, serviceCidrs: ["10.96.0.0/24", "fd00:96::/112"]}')"
	mn_velod 2
	mn_wait_route 1 "^10.77.2.0/24 via 192.168.77.2 dev ul0"
	mn_wait_route 2 "^10.77.1.0/24 via 192.168.77.1 dev ul0"

	mnp_add 1 p
	p="$MN_POD" p4="$MN_IP4" p6="$MN_IP6"
	mnp_add 1 q
	q="$MN_POD" q4="$MN_IP4" q6="$MN_IP6"
	mn_add 2 mnp-b
	b="$MN_POD" b4="$MN_IP4" b6="$MN_IP6"
	pods="[$(mnp_pod 1 p "$p4" "$p6"),$(mnp_pod 1 q "$q4" "$q6"),$(mnp_pod 2 b "$b4" "$b6")]"
	# x/p may send to x/b only.
	pol='[{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
		"metadata": {"namespace": "x", "name": "p-to-b"},
		"spec": {"podSelector": {"matchLabels": {"pod": "p"}}, "policyTypes": ["Egress"],
		"egress": [{"to": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]}}]'
	before="$(mn_metric 1 velo_policy_syncs_total)"
	mnp_file "$VT/n1/policy.json" "$pods" "$pol"
	mnp_wait_syncs 1 $((${before%.*} + 1))
	mnp_wait_link 1 pol_from

	# Backends: the outside host (a host-network server off the pod CIDRs), a server on node 1
	# at an address its local route holds but no interface has (10.123.0.5, "anyip"), one on
	# node 1's own address, and x/b.
	mn_in 1 ip route add local 10.123.0.0/24 dev lo
	mnp_serve "$out" 192.168.77.100 7001
	mnp_serve "$out" fd00:77::100 7001
	mnp_serve "$(mn_node 1)" 10.123.0.5 7002
	mnp_serve "$(mn_node 1)" 192.168.77.1 7003
	mnp_serve "$b" "$b4" 7004
	mnp_serve "$b" "$b6" 7004
	mn_in 1 nft add table inet velotest_kp
	mn_in 1 nft add chain inet velotest_kp svc \
		'{ type nat hook prerouting priority dstnat; policy accept; }'
	svc_dnat ip 10.96.0.10 7001 192.168.77.100
	svc_dnat ip6 fd00:96::10 7001 fd00:77::100
	svc_dnat ip 10.96.0.11 7002 10.123.0.5
	svc_dnat ip 10.96.0.12 7003 192.168.77.1
	svc_dnat ip 10.96.0.13 7004 "$b4"
	svc_dnat ip6 fd00:96::13 7004 "$b6"

	# x/q, under no policy, reaches every backend through the Services: the DNAT works.
	for got in 10.96.0.10:7001 fd00:96::10:7001 10.96.0.11:7002 10.96.0.12:7003 10.96.0.13:7004; do
		[ "$(mnp_connect "$q" "${got%:*}" "${got##*:}")" = ok ] || {
			echo "x/q -> $got refused"
			false
		}
	done

	drops="$(egress_drops)"
	# (i) masqueraded to the outside host: dropped, IPv4 and IPv6 (directly, too).
	got="$(mnp_connect "$p" 10.96.0.10 7001)"
	echo "x/p -> 10.96.0.10:7001 (192.168.77.100, masqueraded): $got"
	[ "$got" = no ]
	got="$(mnp_connect "$p" fd00:96::10 7001)"
	echo "x/p -> [fd00:96::10]:7001 ([fd00:77::100], masqueraded): $got"
	[ "$got" = no ]
	[ "$(mnp_connect "$p" 192.168.77.100 7001)" = no ]
	# (ii) delivered to node 1 at an address that is not one of its interfaces': dropped.
	got="$(mnp_connect "$p" 10.96.0.11 7002)"
	echo "x/p -> 10.96.0.11:7002 (10.123.0.5 on node 1): $got"
	[ "$got" = no ]
	got="$(egress_drops)"
	echo "x/p's egress drops: $drops -> $got"
	[ "$got" -gt "$drops" ]

	# Allowed: x/b through its Service and directly; the node's own address (the API's "to and
	# from the node is always allowed"), through a Service as directly.
	[ "$(mnp_connect "$p" 10.96.0.13 7004)" = ok ]
	[ "$(mnp_connect "$p" fd00:96::13 7004)" = ok ]
	[ "$(mnp_connect "$p" "$b4" 7004)" = ok ]
	[ "$(mnp_connect "$p" 10.96.0.12 7003)" = ok ]
	[ "$(mnp_connect "$p" 192.168.77.1 7003)" = ok ]
	grep -q "policy: velo_pol_nf on netfilter's forward and local-in hooks" "$VT/n1/velod.log"
	compgen -G "$MN_BPFFS-n1/node_v1/pol_nf_ipv4_forward"

	# The policy gone, the hooks go, and x/p reaches the outside host again.
	before="$(mn_metric 1 velo_policy_syncs_total)"
	mnp_file "$VT/n1/policy.json" "$pods" '[]'
	mnp_wait_syncs 1 $((${before%.*} + 1))
	if compgen -G "$MN_BPFFS-n1/node_v1/pol_nf_*"; then false; fi
	[ "$(mnp_connect "$p" 10.96.0.10 7001)" = ok ]
}

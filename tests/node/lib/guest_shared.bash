# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034 # names set here for the callers' grids and tables
#
# The node tests' one harness: what the host's bats helpers (lib.bash, cgroup_lib.bash,
# policy_lib.bash, policy_truth.bats) and the kernel matrix's guest (kernel/matrix/guest-tests.sh)
# both run. Plain bash over nsenter, jq and busybox-level tools: no bats, no python (the guest
# has neither). Callers set the few names it reads (each function says which).
#
# Pods and the node: the CNI invocation, a process in a pod's netns and cgroup, a pod's
# processes ended as a runtime does. NetworkPolicy's truth table: the grid (3 namespaces x 3
# pods, x/a .. z/c), its policy file, the cases, the probes and the held connections.

# ---------------------------------------------------------------- pods and the node

# vs_cni NODE_NETNS PLUGIN CONFIG OUT_FILE ERR_FILE [VAR=VALUE]...: PLUGIN in the node netns
# with exactly these variables (and PATH), CONFIG on stdin, its stdout and stderr to the files;
# returns the plugin's exit status.
vs_cni() {
	local node=$1 plugin=$2 config=$3 out=$4 err=$5
	shift 5
	nsenter --net="/run/netns/$node" env -i PATH="$PATH" "$@" "$plugin" <<<"$config" \
		>"$out" 2>"$err"
}

# vs_in_cgroup NETNS_PATH CGROUP_DIR CMD...: CMD in the netns, as a process of the cgroup.
vs_in_cgroup() {
	local netns=$1 cg=$2
	shift 2
	# shellcheck disable=SC2016 # expanded by the inner sh
	nsenter --net="$netns" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# vs_cgroup_kill CGROUP_DIR [SECONDS]: ends a pod's processes as a runtime does: cgroup.kill (a
# loop over cgroup.procs misses pids when the list shifts under it), then waits, 5 s unless
# told, for cgroup.procs to be empty. Fails if it isn't; a cgroup that doesn't exist has
# nothing to kill.
vs_cgroup_kill() {
	local cg=$1 _
	[ -d "$cg" ] || return 0
	echo 1 >"$cg/cgroup.kill" || return 1
	for _ in $(seq $((${2:-5} * 20))); do
		[ -n "$(cat "$cg/cgroup.procs")" ] || return 0
		sleep 0.05
	done
	echo "cgroup $cg still has processes: $(tr '\n' ' ' <"$cg/cgroup.procs")" >&2
	return 1
}

# ---------------------------------------------------------------- the policy grid

# The grid: namespaces labelled ns=<name>, pods labelled pod=<name>, keys "NS/NAME" in this
# order; policy_probe's servers on every protocol of POL_PROTOS at POL_PORTS in each pod.
POL_NAMESPACES=(x y z)
POL_NAMES=(a b c)
POL_PORTS=(53 80)
POL_PROTOS=(tcp udp sctp)
POL_NODE_NAME="node-a"
ALL_INGRESS='{"podSelector": {}, "policyTypes": ["Ingress"]}'
ALL_EGRESS='{"podSelector": {}, "policyTypes": ["Egress"]}'

# The caller's grid (set as pods come):
#   POL_KEYS       the pods' keys, in the order they were added
#   POL_IP[KEY]    a pod's IPv4 address
#   POL_NS[KEY]    its netns name (under /run/netns), POL_CG[KEY] its cgroup relative to
#                  POL_CG_MOUNT (the cgroup2 mount)
#   POL_NODE_NETNS the node's netns name; POL_WORK a dir for probe files
#   POL_SERVICES   1 when probes go to the pods' ClusterIPs (POL_VIP[KEY]), else 0
#   POL_PODS_JSON  the policy file's pods, cached ("" after a pod was added)

# pol_run KEY CMD...: CMD in grid pod KEY's netns and cgroup.
pol_run() {
	local key=$1
	shift
	vs_in_cgroup "/run/netns/${POL_NS[$key]}" "$POL_CG_MOUNT${POL_CG[$key]}" "$@"
}

# pol_listening LOG WHAT: waits (5 s) for the line "listening" in LOG, the log of a server
# started in the background; else prints LOG and fails.
pol_listening() {
	local _
	for _ in $(seq 100); do
		grep -q '^listening' "$1" && return 0
		sleep 0.05
	done
	echo "$2 did not start: $(cat "$1")"
	return 1
}

# pol_np NS NAME SPEC_JSON: a NetworkPolicy object.
pol_np() {
	jq -cn --arg ns "$1" --arg n "$2" --argjson spec "$3" \
		'{apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy",
		metadata: {namespace: $ns, name: $n}, spec: $spec}'
}

# pol_pod_json KEY: the grid pod KEY as the API shows it. Every pod has container ports named
# for their protocol and number (t53, u53, s53, t80, ...), and "serve": TCP 80 on pods labelled
# pod=a, TCP 53 on the others (a named port resolves per pod).
pol_pod_json() {
	local ns="${1%/*}" name="${1#*/}"
	jq -cn --arg ns "$ns" --arg name "$name" --arg ip "${POL_IP[$1]}" --arg node "$POL_NODE_NAME" '
		([{p: "TCP", s: "t"}, {p: "UDP", s: "u"}, {p: "SCTP", s: "s"}] |
			map(. as $x | [53, 80][] | {name: ($x.s + tostring), containerPort: .,
			protocol: $x.p})) as $numbered |
		{metadata: {namespace: $ns, name: $name, labels: {pod: $name}},
		spec: {nodeName: $node, containers: [{name: "server", ports: ($numbered +
			[{name: "serve", protocol: "TCP",
			containerPort: (if $name == "a" then 80 else 53 end)}])}]},
		status: {phase: "Running", podIP: $ip, podIPs: [{ip: $ip}]}}'
}

# pol_file POLICIES: the policy file's content (velod's policySource "file") for the grid and
# these policies: a JSON array of NetworkPolicies, or an object with "networkPolicies" and
# "clusterNetworkPolicies" arrays.
pol_file() {
	local key pod
	if [ -z "$POL_PODS_JSON" ]; then
		for key in "${POL_KEYS[@]}"; do
			pod="$(pol_pod_json "$key")" || return 1
			POL_PODS_JSON+="${POL_PODS_JSON:+,}$pod"
		done
	fi
	jq -cn --argjson pods "[$POL_PODS_JSON]" --argjson pols "$1" '{
		namespaces: (["x", "y", "z"] | map({metadata: {name: ., labels: {ns: .}}})),
		pods: $pods} + ($pols | if type == "array" then {networkPolicies: .} else . end)'
}

# pol_cnp NAME TIER PRIORITY SPEC_REST_JSON: a ClusterNetworkPolicy (v1beta1); SPEC_REST: its
# subject and rules.
pol_cnp() {
	jq -cn --arg n "$1" --arg tier "$2" --argjson prio "$3" --argjson rest "$4" \
		'{apiVersion: "policy.networking.k8s.io/v1beta1", kind: "ClusterNetworkPolicy",
		metadata: {name: $n}, spec: ({tier: $tier, priority: $prio} + $rest)}'
}

# pol_tiers NPS_JSON_ARRAY CNPS_JSON_ARRAY: a case with both kinds.
pol_tiers() {
	jq -cn --argjson np "$1" --argjson cnp "$2" \
		'{networkPolicies: $np, clusterNetworkPolicies: $cnp}'
}

# ---------------------------------------------------------------- the cases

# The truth table's cases, in the order they run.
POL_CASES=(none deny-all-ingress deny-all-egress allow-from-ns-label pod-and-ns-one-peer-vs-two
	match-expressions ipblock-except named-port end-port egress-dns additive ingress-and-egress
	admin-deny-over-np admin-pass-accept baseline-under-np admin-egress)

NS_X='{"matchLabels": {"ns": "x"}}'
NS_Y='{"matchLabels": {"ns": "y"}}'
NS_Z='{"matchLabels": {"ns": "z"}}'

# pol_case_policies NAME: the case's NetworkPolicies as a JSON array. The ipBlock case is built
# from the grid's addresses and VT_SUBNET4 (the pods' subnet).
pol_case_policies() {
	case "$1" in
	none) echo '[]' ;;
	deny-all-ingress) echo "[$(pol_np x deny "$ALL_INGRESS")]" ;;
	deny-all-egress) echo "[$(pol_np y deny "$ALL_EGRESS")]" ;;
	allow-from-ns-label)
		echo "[$(pol_np x from-y '{"podSelector": {"matchLabels": {"pod": "a"}},
			"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}]}]}')]"
		;;
	pod-and-ns-one-peer-vs-two)
		# x/a: the b pods of namespace y only; x/b: all of y, and c of its own namespace.
		echo "[$(pol_np x one-peer '{"podSelector": {"matchLabels": {"pod": "a"}},
			"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}},
				"podSelector": {"matchLabels": {"pod": "b"}}}]}]}'),
			$(pol_np x two-peers '{"podSelector": {"matchLabels": {"pod": "b"}},
			"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}},
				{"podSelector": {"matchLabels": {"pod": "c"}}}]}]}')]"
		;;
	match-expressions)
		echo "[$(pol_np z in-notin '{"podSelector": {"matchExpressions": [
				{"key": "pod", "operator": "In", "values": ["a", "b"]}]},
			"ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [
				{"key": "ns", "operator": "NotIn", "values": ["x"]}]},
				"podSelector": {"matchExpressions": [
				{"key": "pod", "operator": "NotIn", "values": ["c"]}]}}]}]}'),
			$(pol_np y exists '{"podSelector": {"matchExpressions": [
				{"key": "pod", "operator": "Exists"}, {"key": "pod", "operator": "In",
				"values": ["c"]}]},
			"ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [
				{"key": "ns", "operator": "Exists"},
				{"key": "tier", "operator": "DoesNotExist"}]},
				"podSelector": {"matchExpressions": [
				{"key": "pod", "operator": "In", "values": ["a"]}]}}]}]}')]"
		;;
	ipblock-except)
		# Ingress of x from the pod subnet except y/a; egress of y/b to it except x/c's /30.
		echo "[$(pol_np x block "$(jq -cn --arg c "$VT_SUBNET4" --arg e "${POL_IP[y/a]}/32" '{
			podSelector: {}, ingress: [{from: [{ipBlock: {cidr: $c, except: [$e]}}]}]}')"),
			$(pol_np y block "$(jq -cn --arg c "$VT_SUBNET4" --arg e "${POL_IP[x/c]%.*}.$((${POL_IP[x/c]##*.} & ~3))/30" '{
			podSelector: {matchLabels: {pod: "b"}}, policyTypes: ["Egress"],
			egress: [{to: [{ipBlock: {cidr: $c, except: [$e]}}]}]}')")]"
		;;
	named-port)
		# "serve" is TCP 80 on the a pods and TCP 53 on the others; u53 is UDP 53 everywhere.
		echo "[$(pol_np y named '{"podSelector": {},
			"ingress": [{"ports": [{"port": "serve"}, {"protocol": "UDP", "port": "u53"}]}]}'),
			$(pol_np z named-egress '{"podSelector": {"matchLabels": {"pod": "a"}},
			"policyTypes": ["Egress"], "egress": [{"ports": [{"port": "serve"}]}]}')]"
		;;
	end-port)
		echo "[$(pol_np z range '{"podSelector": {"matchLabels": {"pod": "a"}},
			"ingress": [{"ports": [{"protocol": "TCP", "port": 50, "endPort": 80},
				{"protocol": "UDP", "port": 54, "endPort": 90}]}]}'),
			$(pol_np z range-sctp '{"podSelector": {"matchLabels": {"pod": "b"}},
			"ingress": [{"ports": [{"protocol": "SCTP", "port": 53, "endPort": 79}]}]}')]"
		;;
	egress-dns)
		# x may only reach z/c's UDP 53 (its "DNS") and TCP 80 of namespace y.
		echo "[$(pol_np x dns '{"podSelector": {}, "policyTypes": ["Egress"],
			"egress": [{"to": [{"namespaceSelector": {"matchLabels": {"ns": "z"}},
				"podSelector": {"matchLabels": {"pod": "c"}}}],
				"ports": [{"protocol": "UDP", "port": 53}]},
				{"to": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}],
				"ports": [{"protocol": "TCP", "port": 80}]}]}')]"
		;;
	additive)
		# x/a: deny-all, plus y on TCP 80, plus z/b on UDP 53: the union.
		echo "[$(pol_np x deny "$ALL_INGRESS"),
			$(pol_np x from-y '{"podSelector": {"matchLabels": {"pod": "a"}},
			"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}],
				"ports": [{"port": 80}]}]}'),
			$(pol_np x from-zb '{"podSelector": {"matchLabels": {"pod": "a"}},
			"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "z"}},
				"podSelector": {"matchLabels": {"pod": "b"}}}],
				"ports": [{"protocol": "UDP", "port": 53}]}]}')]"
		;;
	ingress-and-egress)
		# y/a may send nowhere but x/a; x/a takes only y/a; z/* egress: their own namespace.
		echo "[$(pol_np y out '{"podSelector": {"matchLabels": {"pod": "a"}},
			"policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector":
				{"matchLabels": {"ns": "x"}}, "podSelector": {"matchLabels": {"pod": "a"}}}]}]}'),
			$(pol_np x in '{"podSelector": {"matchLabels": {"pod": "a"}},
			"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}},
				"podSelector": {"matchLabels": {"pod": "a"}}}]}]}'),
			$(pol_np z own '{"podSelector": {}, "policyTypes": ["Egress", "Ingress"],
			"egress": [{"to": [{"podSelector": {}}]}], "ingress": [{}]}')]"
		;;
	admin-deny-over-np)
		# ClusterNetworkPolicy's Admin tier before NetworkPolicy: x lets everyone in, the
		# admin denies y.
		pol_tiers "[$(pol_np x all '{"podSelector": {}, "ingress": [{}]}')]" \
			"[$(pol_cnp deny-y Admin 10 "{\"subject\": {\"namespaces\": $NS_X},
				\"ingress\": [{\"action\": \"Deny\", \"from\": [{\"namespaces\": $NS_Y}]}]}")]"
		;;
	admin-pass-accept)
		# x isolated by a NetworkPolicy allowing y on TCP 80 and 53. Admin: y's TCP 80 passes
		# to it (priority 1), the rest of y is denied (2), z is accepted over the isolation (3).
		pol_tiers "[$(pol_np x from-y "{\"podSelector\": {}, \"ingress\": [{\"from\":
				[{\"namespaceSelector\": $NS_Y}], \"ports\": [{\"port\": 80}, {\"port\": 53}]}]}")]" \
			"[$(pol_cnp pass-y-80 Admin 1 "{\"subject\": {\"namespaces\": $NS_X},
				\"ingress\": [{\"action\": \"Pass\", \"from\": [{\"namespaces\": $NS_Y}],
				\"protocols\": [{\"tcp\": {\"destinationPort\": {\"number\": 80}}}]}]}"),
			$(pol_cnp deny-y Admin 2 "{\"subject\": {\"namespaces\": $NS_X},
				\"ingress\": [{\"action\": \"Deny\", \"from\": [{\"namespaces\": $NS_Y}]}]}"),
			$(pol_cnp accept-z Admin 3 "{\"subject\": {\"namespaces\": $NS_X},
				\"ingress\": [{\"action\": \"Accept\", \"from\": [{\"namespaces\": $NS_Z}]}]}")]"
		;;
	baseline-under-np)
		# Baseline denies every pod into x; a NetworkPolicy lets y into x/a, and wins there.
		pol_tiers "[$(pol_np x a-from-y "{\"podSelector\": {\"matchLabels\": {\"pod\": \"a\"}},
				\"ingress\": [{\"from\": [{\"namespaceSelector\": $NS_Y}]}]}")]" \
			"[$(pol_cnp base-x Baseline 5 "{\"subject\": {\"namespaces\": $NS_X},
				\"ingress\": [{\"action\": \"Deny\", \"from\": [{\"namespaces\": {}}]}]}")]"
		;;
	admin-egress)
		# z/a may reach y's pods on TCP 50-80, UDP named u53 and SCTP 80 (raw packets where
		# the kernel has no SCTP sockets), nothing else of the pod subnet;
		# z/b: Baseline denies its egress to x/b only.
		pol_tiers "[]" "[$(pol_cnp z-out Admin 4 "$(jq -cn --arg c "$VT_SUBNET4" --argjson y "$NS_Y" '{
				subject: {pods: {namespaceSelector: {matchLabels: {ns: "z"}},
					podSelector: {matchLabels: {pod: "a"}}}},
				egress: [{action: "Accept", to: [{namespaces: $y}],
					protocols: [{tcp: {destinationPort: {range: {start: 50, end: 80}}}},
						{destinationNamedPort: "u53"},
						{sctp: {destinationPort: {number: 80}}}]},
					{action: "Deny", to: [{networks: [$c]}]}]}')"),
			$(pol_cnp zb-out Baseline 4 "$(jq -cn --arg b "${POL_IP[x/b]}/32" '{
				subject: {pods: {namespaceSelector: {matchLabels: {ns: "z"}},
					podSelector: {matchLabels: {pod: "b"}}}},
				egress: [{action: "Deny", to: [{networks: [$b]}]}]}')")]"
		;;
	*) return 1 ;;
	esac
}

# ---------------------------------------------------------------- probing

# pol_probe_files DIR NODE_ADDR4: the probes of one case, every pod (and the node) to every pod
# on every protocol and port: per source DIR/probes-<src> ("ID PROTO ADDR PORT", policy_probe's
# input), and DIR/model-probes ("ID SRC DST DST_ADDR PROTO PORT", policy_model.py's). IDs are
# "SRC>DST>PROTO>PORT"; POL_NO_SCTP leaves SCTP out.
pol_probe_files() {
	local dir=$1 node_addr=$2 key dst proto port addr
	: >"$dir/model-probes"
	for key in "${POL_KEYS[@]}" node; do
		: >"$dir/probes-${key/\//-}"
		for dst in "${POL_KEYS[@]}"; do
			addr="${POL_IP[$dst]}"
			if [ "$POL_SERVICES" = 1 ]; then
				# To ClusterIPs from pods only, never a pod to its own Service (kube-proxy's
				# hairpin needs its masquerade, which the node's DNAT here doesn't do).
				[ "$key" = node ] || [ "$key" = "$dst" ] && continue
				addr="${POL_VIP[$dst]}"
			fi
			for proto in "${POL_PROTOS[@]}"; do
				[ "$proto" = sctp ] && [ -n "${POL_NO_SCTP:-}" ] && continue
				for port in "${POL_PORTS[@]}"; do
					echo "$key>$dst>$proto>$port $proto $addr $port" \
						>>"$dir/probes-${key/\//-}"
					if [ "$key" = node ]; then
						echo -n "$key>$dst>$proto>$port ip:$node_addr "
					else
						echo -n "$key>$dst>$proto>$port $key "
					fi >>"$dir/model-probes"
					echo "$dst ${POL_IP[$dst]} $proto $port" >>"$dir/model-probes"
				done
			done
		done
	done
}

# pol_probe_all DIR PROBE_BIN: every source's probes at once (each in its pod's netns and
# cgroup, the node's in the node), POL_TIMEOUT_MS (1500) each; "ID VERDICT" lines in
# DIR/results.
pol_probe_all() {
	local dir=$1 bin=$2 key pids=() pid rc=0
	for key in "${POL_KEYS[@]}"; do
		pol_run "$key" "$bin" probe -t "${POL_TIMEOUT_MS:-1500}" \
			<"$dir/probes-${key/\//-}" >"$dir/out-${key/\//-}" 2>&1 &
		pids+=($!)
	done
	nsenter --net="/run/netns/$POL_NODE_NETNS" "$bin" probe -t "${POL_TIMEOUT_MS:-1500}" \
		<"$dir/probes-node" >"$dir/out-node" 2>&1 &
	pids+=($!)
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=1
	done
	cat "$dir"/out-* >"$dir/results"
	if [ "$rc" != 0 ]; then
		echo "a prober failed:"
		grep -v ' ok$\| timeout$' "$dir/results" | head
		return 1
	fi
}

# ---------------------------------------------------------------- held connections

# pol_hold_start NAME SRC_KEY PROTO DST_ADDR PORT PROBE_BIN: a held connection from a grid pod
# (policy_probe hold), fed through a fifo; its verdicts go to $POL_WORK/hold-NAME.out. The first
# one must be ok.
pol_hold_start() {
	local fifo="$POL_WORK/hold-$1.in" out="$POL_WORK/hold-$1.out" _ fd
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	pol_run "$2" "$6" hold -t 2000 "$3" "$4" "$5" <"$fifo" >"$out" 2>&1 &
	VT_PIDS+=($!)
	exec {fd}>"$fifo"
	eval "POL_HOLD_FD_$1=$fd"
	for _ in $(seq 60); do
		[ -s "$out" ] && break
		sleep 0.05
	done
	[ "$(head -n 1 "$out")" = ok ] || {
		echo "held $3 connection $2 -> $4:$5: $(cat "$out")"
		return 1
	}
}

# pol_hold_exchange NAME: one more exchange on the held connection; prints its verdict.
pol_hold_exchange() {
	local out="$POL_WORK/hold-$1.out" fdvar="POL_HOLD_FD_$1" n _
	n="$(wc -l <"$out")"
	echo x >&"${!fdvar}"
	for _ in $(seq 100); do
		[ "$(wc -l <"$out")" -gt "$n" ] && break
		sleep 0.05
	done
	tail -n 1 "$out"
}

# pol_held APPLY_CMD PROBE_BIN: a policy change cuts the held connections it forbids and keeps
# those it still allows, as conntrack-based enforcement would (TCP y/a -> x/a cut, y/b -> x/b
# kept; UDP z/a -> x/a cut). APPLY_CMD POLICIES_JSON_ARRAY writes the policy file and waits for
# velod's sync.
pol_held() {
	local apply=$1 bin=$2 dst_a="${POL_IP[x/a]}" dst_b="${POL_IP[x/b]}" verdict bad=0
	[ "$POL_SERVICES" = 1 ] && dst_a="${POL_VIP[x/a]}" dst_b="${POL_VIP[x/b]}"
	"$apply" '[]' || return 1
	pol_hold_start cut y/a tcp "$dst_a" 80 "$bin" || return 1
	pol_hold_start kept y/b tcp "$dst_b" 80 "$bin" || return 1
	pol_hold_start udp z/a udp "$dst_a" 53 "$bin" || return 1
	verdict="$(pol_hold_exchange cut)"
	[ "$verdict" = ok ] || { echo "held TCP y/a -> x/a before the change: $verdict"; return 1; }
	"$apply" "[$(pol_np x only-yb '{"podSelector": {},
		"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}},
			"podSelector": {"matchLabels": {"pod": "b"}}}]}]}')]" || return 1
	verdict="$(pol_hold_exchange cut)"
	echo "held TCP y/a -> x/a after the change: $verdict (must not be ok)"
	[ "$verdict" != ok ] || bad=1
	verdict="$(pol_hold_exchange kept)"
	echo "held TCP y/b -> x/b after the change: $verdict (must be ok)"
	[ "$verdict" = ok ] || bad=1
	verdict="$(pol_hold_exchange udp)"
	echo "held UDP z/a -> x/a after the change: $verdict (must not be ok)"
	[ "$verdict" != ok ] || bad=1
	pol_hold_close cut kept udp
	return $bad
}

# pol_hold_close NAME...: ends the held connections' input (their holders exit on EOF).
pol_hold_close() {
	local name fdvar fd
	for name in "$@"; do
		fdvar="POL_HOLD_FD_$name"
		fd=${!fdvar:-}
		[ -n "$fd" ] || continue
		exec {fd}>&-
		eval "POL_HOLD_FD_$name="
	done
}

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# velo's own end-to-end checks in the kind cluster that `hack/kind.sh up` made (a real kubelet,
# kube-proxy, controller-manager and CoreDNS drive velo): run as `hack/kind.sh e2e`.
#
# Pods opt in by annotation through the kubelet; every feature attaches and veloctl in the velo
# pod shows it; connectivity with data (same node, cross node over velo's host-gw routes, node
# to pod, Services through kube-proxy and through velo's translation, DNS); opted-in pods'
# cross-node flows take velod's crossNodeTc both ways; sockmap pairs
# same-node TCP; translation follows real EndpointSlices (a Deployment scaled up and down, a
# deleted backend's connections closed); velod's /metrics; a DaemonSet rollout keeps
# established connections; a restarted worker comes back with nothing leaked; 100 pods created
# and deleted leave nothing behind. Ends with "N passed, N failed"; exit 0 only if none failed.
#
# Environment: KUBECONFIG (VELO_E2E_KUBECONFIG), VELO_E2E_TEST_IMAGE (a busybox image the nodes have), VELO_E2E_TIMEOUT (300s),
# VELO_E2E_CHURN (100 pods).
set -euo pipefail

export KUBECONFIG=${VELO_E2E_KUBECONFIG:-${KUBECONFIG:-}}
test_image=${VELO_E2E_TEST_IMAGE:?the nodes\' busybox image}
timeout=${VELO_E2E_TIMEOUT:-300s}
churn=${VELO_E2E_CHURN:-100}
ns=velo-e2e
passed=0 failed=0
work=$(mktemp -d /tmp/velo-e2e.XXXXXX)
holders=()

log() { printf '== %s\n' "$*" >&2; }
die() {
	printf 'e2e: error: %s\n' "$*" >&2
	exit 1
}
kc() { kubectl "$@"; }
kn() { kubectl -n "$ns" "$@"; }

# check NAME COMMAND...: runs COMMAND, counts and prints the result.
check() {
	local name=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
		printf 'ok - %s\n' "$name"
	else
		failed=$((failed + 1))
		printf 'not ok - %s\n' "$name"
	fi
}

# eventually SECONDS COMMAND...: COMMAND succeeds within SECONDS.
eventually() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 2
	done
}

cleanup() {
	local rc=$?
	[ "${#holders[@]}" -eq 0 ] || kill "${holders[@]}" 2>/dev/null || true
	rm -rf "$work"
	if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
		kn get pods -o wide 2>/dev/null || true
	fi
	kc delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	exit "$rc"
}

kc get --raw /readyz >/dev/null || die "no cluster answers (KUBECONFIG=$KUBECONFIG)"
trap cleanup EXIT
kc delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
kc create namespace "$ns" >/dev/null

mapfile -t workers < <(kc get nodes -l '!node-role.kubernetes.io/control-plane' \
	-o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
[ "${#workers[@]}" -ge 2 ] || die "expected two workers, found ${#workers[@]}"
control_plane=$(kc get nodes -l node-role.kubernetes.io/control-plane \
	-o jsonpath='{.items[0].metadata.name}')

# velo_pod NODE: the velo DaemonSet pod on NODE.
velo_pod() {
	kc -n velo-system get pods -l app.kubernetes.io/name=velo \
		--field-selector "spec.nodeName=$1" -o jsonpath='{.items[0].metadata.name}'
}
# veloctl NODE ARGS...: veloctl in the velo pod of NODE.
veloctl() {
	local node=$1
	shift
	kc -n velo-system exec "$(velo_pod "$node")" -c velod -- veloctl "$@"
}

# Each node's conflist carries its own podCIDR as the IPAM range.
conflist_has_node_cidr() {
	local node=$1 cidr ranges
	cidr=$(kc get node "$node" -o jsonpath='{.spec.podCIDR}')
	ranges=$(docker exec "$node" cat /etc/cni/net.d/10-velo.conflist |
		jq -r '.plugins[] | select(.type == "velo") | .ipam.ranges[][].subnet')
	[ -n "$cidr" ] && grep -qxF "$cidr" <<<"$ranges"
}
for node in "$control_plane" "${workers[@]}"; do
	check "$node: conflist range is the node's podCIDR" conflist_has_node_cidr "$node"
	check "$node: kubeconfig is 0600" \
		test "$(docker exec "$node" stat -c %a /etc/cni/net.d/velo.d/kubeconfig)" = 600
done

fast_annotations='velo.dev/fastpath: tc
    velo.dev/sockmap: "true"
    velo.dev/services: "true"
    velo.dev/accounting: "true"'

# pod_yaml NAME NODE ROLE ANNOTATED: a busybox pod pinned to NODE with a Service of its own;
# servers serve their own name at / and a 4 MiB random blob (with its md5) on port 8080, and
# echo what they get on TCP 9000 (held connections).
pod_yaml() {
	local name=$1 node=$2 role=$3 annotated=$4 command
	if [ "$role" = server ]; then
		command='mkdir -p /www && hostname >/www/index.html &&
          dd if=/dev/urandom of=/www/blob bs=1M count=4 2>/dev/null &&
          md5sum /www/blob | cut -d" " -f1 >/www/blob.md5 &&
          (nc -ll -p 9000 -e cat &) && exec httpd -f -p 8080 -h /www'
	else
		command='exec sleep 3600'
	fi
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels:
    app: $name
EOF
	if [ "$annotated" = 1 ]; then
		printf '  annotations:\n    %s\n' "$fast_annotations"
	fi
	cat <<EOF
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: $test_image
      command: ["sh", "-c", '$command']
EOF
	# A server is Ready once httpd listens (after its blob is written).
	[ "$role" != server ] || cat <<'EOF'
      readinessProbe:
        tcpSocket: {port: 8080}
        periodSeconds: 1
EOF
	cat <<EOF
---
apiVersion: v1
kind: Service
metadata:
  name: $name
spec:
  selector:
    app: $name
  ports:
    - name: http
      port: 80
      targetPort: 8080
    - name: echo
      port: 9000
      targetPort: 9000
EOF
}

log "starting test pods"
{
	for variant in plain fast; do
		annotated=0
		[ "$variant" = plain ] || annotated=1
		pod_yaml "$variant-srv-a" "${workers[0]}" server "$annotated"
		pod_yaml "$variant-cli-a" "${workers[0]}" client "$annotated"
		pod_yaml "$variant-srv-b" "${workers[1]}" server "$annotated"
	done
} | kn apply -f - >/dev/null
kn wait --for=condition=Ready pod --all --timeout="$timeout" >/dev/null

pod_ip() { kn get pod "$1" -o jsonpath='{.status.podIP}'; }
# pod_ip6 POD: the pod's IPv6 address in a dual-stack cluster, else nothing.
pod_ip6() { kn get pod "$1" -o jsonpath='{.status.podIPs[*].ip}' | tr ' ' '\n' | grep : || true; }
svc_ip() { kn get service "$1" -o jsonpath='{.spec.clusterIP}'; }

# fetch_name CLIENT URL SERVER: CLIENT gets URL and the answer is SERVER's name.
fetch_name() {
	local got
	got=$(kn exec "$1" -- timeout 5 wget -qO- "$2") || return 1
	[ "$got" = "$3" ] || {
		printf '    got "%s", want "%s"\n' "$got" "$3"
		return 1
	}
}

# fetch_blob CLIENT BASE_URL: the 4 MiB blob arrives intact (md5 as the server computed it).
fetch_blob() {
	local want got
	want=$(kn exec "$1" -- timeout 5 wget -qO- "$2/blob.md5") || return 1
	got=$(kn exec "$1" -- sh -c "timeout 20 wget -qO- '$2/blob' | md5sum" | cut -d' ' -f1)
	[ -n "$want" ] && [ "$want" = "$got" ]
}

# node_fetch NODE URL SERVER: the node itself (its root netns) reaches the pod.
node_fetch() {
	local got
	got=$(docker exec "$1" curl -fsS --max-time 5 "$2") || return 1
	[ "$got" = "$3" ]
}

dns_resolves() {
	kn exec "$1" -- nslookup "$2" >/dev/null
}

for variant in plain fast; do
	cli=$variant-cli-a
	srv_a=$variant-srv-a
	srv_b=$variant-srv-b
	ip_a=$(pod_ip "$srv_a")
	ip_b=$(pod_ip "$srv_b")
	log "$variant pods: $srv_a $ip_a, $srv_b $ip_b"
	check "$variant: same node, pod to pod" fetch_name "$cli" "http://$ip_a:8080/" "$srv_a"
	check "$variant: same node, 4 MiB intact" fetch_blob "$cli" "http://$ip_a:8080"
	check "$variant: cross node, pod to pod" fetch_name "$cli" "http://$ip_b:8080/" "$srv_b"
	check "$variant: cross node, 4 MiB intact" fetch_blob "$cli" "http://$ip_b:8080"
	check "$variant: node to local pod" node_fetch "${workers[0]}" "http://$ip_a:8080/" "$srv_a"
	check "$variant: node to remote pod" node_fetch "$control_plane" "http://$ip_b:8080/" "$srv_b"
	check "$variant: Service ClusterIP to a remote pod" \
		fetch_name "$cli" "http://$(svc_ip "$srv_b")/" "$srv_b"
	check "$variant: Service ClusterIP to a local pod" \
		fetch_name "$cli" "http://$(svc_ip "$srv_a")/" "$srv_a"
	ip6_a=$(pod_ip6 "$srv_a")
	ip6_b=$(pod_ip6 "$srv_b")
	if [ -n "$ip6_a" ] && [ -n "$ip6_b" ]; then
		check "$variant: IPv6 same node, 4 MiB intact" fetch_blob "$cli" "http://[$ip6_a]:8080"
		check "$variant: IPv6 cross node, 4 MiB intact" fetch_blob "$cli" "http://[$ip6_b]:8080"
		check "$variant: IPv6 node to remote pod" \
			node_fetch "$control_plane" "http://[$ip6_b]:8080/" "$srv_b"
	fi
	check "$variant: DNS kubernetes.default" dns_resolves "$cli" \
		kubernetes.default.svc.cluster.local
	check "$variant: Service by DNS name" \
		fetch_name "$cli" "http://$srv_b.$ns.svc.cluster.local/" "$srv_b"
done
# A shortcut needs both ends opted in: mixed pairs fall back to the routed path.
check "mixed: annotated client to plain server, same node" \
	fetch_name fast-cli-a "http://$(pod_ip plain-srv-a):8080/" plain-srv-a
check "mixed: plain client to annotated server, same node" \
	fetch_name plain-cli-a "http://$(pod_ip fast-srv-a):8080/" fast-srv-a

# endpoint_features NODE POD: the features veloctl lists for POD's endpoint, one per line.
endpoint_features() {
	veloctl "$1" -j endpoints |
		jq -r --arg pod "$ns/$2" '.[] | select(.podNamespace + "/" + .podName == $pod) |
			.features[]'
}
# has_features NODE POD FEATURE...: veloctl shows each FEATURE attached to POD.
has_features() {
	local node=$1 pod=$2 got f
	shift 2
	got=$(endpoint_features "$node" "$pod") || return 1
	for f in "$@"; do
		grep -qxF "$f" <<<"$got" || {
			printf '    %s: no %s in [%s]\n' "$pod" "$f" "$(tr '\n' ' ' <<<"$got")"
			return 1
		}
	done
}
no_features() {
	local got
	# "policy" is on every pod's record while the shipped manifest enforces NetworkPolicy: it
	# says velod manages the pod's policy programs, which attach only while a policy selects it.
	got=$(endpoint_features "$1" "$2") || return 1
	got=$(grep -vx policy <<<"$got" || true)
	[ -z "$got" ] || {
		printf '    %s: unexpected [%s]\n' "$2" "$(tr '\n' ' ' <<<"$got")"
		return 1
	}
}
check "veloctl: the annotated pods' features attached through the kubelet" \
	has_features "${workers[0]}" fast-cli-a fastpath sockmap services accounting
check "veloctl: the annotated server's features attached" \
	has_features "${workers[0]}" fast-srv-a fastpath sockmap services accounting
check "veloctl: a pod without annotations runs no velo program" \
	no_features "${workers[0]}" plain-cli-a

# hold_connection CLIENT TARGET PORT NAME: a TCP connection from CLIENT to TARGET:PORT that
# stays open, writing a numbered line every 0.2 s into the echo server. The kubectl exec that
# carries it runs here in the background: its echoes go to $work/NAME.out, its exit status
# (the connection ended) to $work/NAME.rc.
hold_connection() {
	local name=$4
	rm -f "$work/$name.out" "$work/$name.rc"
	(
		rc=0
		kn exec "$1" -- sh -c "i=0; while :; do i=\$((i+1)); echo $name-\$i; sleep 0.2; done |
			nc $2 $3" >"$work/$name.out" 2>/dev/null || rc=$?
		echo "$rc" >"$work/$name.rc"
	) &
	holders+=("$!")
}
# connection_alive NAME: the held connection still gets fresh echoes.
connection_alive() {
	local before after
	sleep 1
	before=$(wc -l <"$work/$1.out")
	sleep 2
	after=$(wc -l <"$work/$1.out")
	[ ! -e "$work/$1.rc" ] || {
		echo "    $1 ended: rc $(cat "$work/$1.rc")"
		return 1
	}
	[ "$after" -gt "$before" ] || {
		echo "    $1: $before -> $after lines"
		return 1
	}
}
# connection_closed NAME: the held connection has ended.
connection_closed() {
	eventually 10 test -e "$work/$1.rc" || {
		echo "    $1 still open"
		return 1
	}
}

# Sockmap: a same-node connection between two opted-in pods is in the sockhash, both ends.
paired() {
	veloctl "$1" -j sockets | jq -e --arg a "$ns/$2" --arg b "$ns/$3" \
		'[.connections[] | select(.accelerated) | [.local.pod, .peer.pod] | sort |
			select(. == ([$a, $b] | sort))] | length > 0' >/dev/null
}
accelerated_between() {
	eventually 10 paired "$@" || {
		veloctl "$1" sockets || true
		return 1
	}
}
hold_connection fast-cli-a "$(pod_ip fast-srv-a)" 9000 direct
check "sockmap: a held same-node connection echoes" connection_alive direct
check "sockmap: veloctl shows it accelerated (both ends in the sockhash)" \
	accelerated_between "${workers[0]}" fast-cli-a fast-srv-a

# Services: the annotated client's connect to a ClusterIP is translated from the real
# EndpointSlice; veloctl services counts it against the backend pod.
service_translated_to() {
	local node=$1 vip=$2 port=$3 backend=$4
	veloctl "$node" -j services | jq -e --arg vip "$vip" --argjson port "$port" \
		--arg be "$backend" '[.servicePorts[] | select(.clusterIP == $vip and .port == $port)
			| select(.translations > 0) | .backends[] | select(.address == $be)]
			| length > 0' >/dev/null || {
		veloctl "$node" services || true
		return 1
	}
}
vip_a=$(svc_ip fast-srv-a)
check "services: annotated client reaches the ClusterIP" \
	fetch_name fast-cli-a "http://$vip_a/" fast-srv-a
check "services: veloctl shows the connect translated to the backend pod" \
	service_translated_to "${workers[0]}" "$vip_a" 80 "$(pod_ip fast-srv-a)"
hold_connection fast-cli-a "$vip_a" 9000 viasvc
check "services: a held connection through the ClusterIP echoes" connection_alive viasvc

# velod's /metrics, scraped from the node as Prometheus would.
metrics_have() {
	local out
	out=$(docker exec "$1" curl -fsS --max-time 5 http://127.0.0.1:9099/metrics) || return 1
	grep -q '^velo_build_info{' <<<"$out" && grep -q '^velo_endpoints{' <<<"$out" &&
		grep -q '^velo_k8s_nodes 3$' <<<"$out"
}
check "velod: /metrics answers with endpoint and node series" metrics_have "${workers[0]}"

# cross_node_took NODE: velod's crossNodeTc (velo-overrides.json) carried opted-in pods' flows to
# and from the other worker past NODE's routing, both ways (the fast variant's checks above).
cross_node_took() {
	local out
	out=$(docker exec "$1" curl -fsS --max-time 5 http://127.0.0.1:9099/metrics) || return 1
	grep -q '^velo_cross_node_attached{device="eth0"} 1$' <<<"$out" &&
		grep -Eq '^velo_cross_node_redirect_packets_total\{direction="send"\} [1-9]' <<<"$out" &&
		grep -Eq '^velo_cross_node_redirect_packets_total\{direction="receive"\} [1-9]' <<<"$out"
}
for node in "${workers[@]}"; do
	check "cross-node tc: $node sent and received the fast pods' flows past its routing" \
		cross_node_took "$node"
done

# A Deployment scaled 1 -> 3 -> 1: translation follows its EndpointSlice.
cat <<EOF | kn apply -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: main
          image: $test_image
          command: ["sh", "-c", "mkdir -p /www && hostname >/www/index.html && exec httpd -f -p 8080 -h /www"]
          readinessProbe:
            tcpSocket: {port: 8080}
            periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
      targetPort: 8080
EOF
kn rollout status deployment/web --timeout="$timeout" >/dev/null
vip_web=$(svc_ip web)
# web_backends_match NODE: velo's backends for the web Service's VIP on NODE are exactly the
# ready web pods (sets want and got).
web_backends_match() {
	want=$(kn get pods -l app=web -o json | jq -r '.items[] | select(.status.conditions[]? |
		select(.type == "Ready" and .status == "True")) | .status.podIP' | sort)
	got=$(veloctl "$1" -j services | jq -r --arg vip "$vip_web" '.servicePorts[] |
		select(.clusterIP == $vip and .port == 80) | .backends[].address' | sort)
	[ -n "$want" ] && [ "$want" = "$got" ]
}
backends_are_web_pods() {
	local want got
	eventually 20 web_backends_match "$1" || {
		printf '    want [%s] got [%s]\n' "${want//$'\n'/ }" "${got//$'\n'/ }"
		return 1
	}
}
check "services: one replica, one backend" backends_are_web_pods "${workers[0]}"
kn scale deployment/web --replicas=3 >/dev/null
kn rollout status deployment/web --timeout="$timeout" >/dev/null
check "services: scaled to three, three backends" backends_are_web_pods "${workers[0]}"
kn scale deployment/web --replicas=1 >/dev/null
kn rollout status deployment/web --timeout="$timeout" >/dev/null
check "services: scaled back to one, one backend" backends_are_web_pods "${workers[0]}"

# Deleting a backend pod closes the translated connections to it (as kube-proxy's conntrack
# flush would time them out); the connection through plain-srv's kube-proxy path is not ours.
kn delete pod fast-srv-a --wait=true >/dev/null
check "services: deleting the backend pod closes the held connection" \
	connection_closed viasvc

# A velo DaemonSet rollout keeps established connections: the datapath lives in the kernel.
hold_connection fast-cli-a "$(pod_ip fast-srv-b)" 9000 rollout-fast
hold_connection plain-cli-a "$(pod_ip plain-srv-a)" 9000 rollout-plain
kc -n velo-system rollout restart daemonset/velo >/dev/null
kc -n velo-system rollout status daemonset/velo --timeout="$timeout" >/dev/null
check "rollout: an annotated pod's cross-node connection survives" \
	connection_alive rollout-fast
check "rollout: a plain pod's same-node connection survives" connection_alive rollout-plain

# node_matches_pods NODE: one host veth and one endpoint record per (not host-network) pod of
# NODE (sets pods, veths, records).
node_matches_pods() {
	pods=$(kc get pods -A --field-selector "spec.nodeName=$1" -o json |
		jq '[.items[] | select(.spec.hostNetwork != true)] | length')
	veths=$(docker exec "$1" sh -c "ip -o link show type veth | grep -c ': velo' || true")
	records=$(docker exec "$1" sh -c 'ls /var/lib/velo/velo 2>/dev/null | grep -c "\.json$" || true')
	[ "$veths" = "$pods" ] && [ "$records" = "$pods" ]
}
nothing_leaked() {
	local pods veths records
	# Deleted pods take their grace period (30 s) and then DEL; minutes on a loaded node.
	eventually 240 node_matches_pods "$1" || {
		echo "    $1: $pods pods, $veths veths, $records records"
		return 1
	}
}

# A worker restarted as a machine reboots: pods come back reachable, nothing leaked.
restart_count() { kn get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }
# restarted POD COUNT: POD's container has run again since it had COUNT restarts. Until then
# the API still shows the status from before the reboot (Ready, and the old address).
restarted() { [ "$(restart_count "$1")" -gt "$2" ]; }
# reach CLIENT SERVER: CLIENT gets SERVER's name from SERVER's current address.
reach() { fetch_name "$1" "http://$(pod_ip "$2"):8080/" "$2"; }
plain_restarts=$(restart_count plain-srv-b)
fast_restarts=$(restart_count fast-srv-b)
# The other nodes' pod CIDRs: velod's routes to them must be in before the runtime wires the
# first pod after the reboot (the conflist is a link to tmpfs, docs/kubernetes.md).
other_cidrs=$(kc get nodes -o json | jq -r --arg node "${workers[1]}" \
	'.items[] | select(.metadata.name != $node) | .spec.podCIDRs[]' | tr '\n' ' ')
log "restarting ${workers[1]}"
docker restart "${workers[1]}" >/dev/null
# Sampled in the node's netns every 0.1 s from its boot (from here: the node's own /tmp is
# mounted anew while it boots): time, how many of those routes are in, how many pod veths velo
# has made.
node_pid=$(docker inspect -f '{{.State.Pid}}' "${workers[1]}")
(while :; do
	n=0
	for cidr in $other_cidrs; do
		family=-4
		[[ $cidr != *:* ]] || family=-6
		[ -z "$(nsenter -t "$node_pid" -n ip "$family" route show exact "$cidr")" ] ||
			n=$((n + 1))
	done
	veths=$(nsenter -t "$node_pid" -n ip -o link show type veth | grep -c ": velo" || true)
	echo "$(date +%s.%N) $n $veths"
	sleep 0.1
done >"$work/restart-samples.log" 2>/dev/null) &
node_sampler=$!
holders+=("$node_sampler")
# The kubelet's view while velod starts: the node's Ready message, once a second.
(while sleep 1; do
	kc get node "${workers[1]}" \
		-o jsonpath='{.status.conditions[?(@.type=="Ready")].message}{"\n"}' 2>/dev/null
done >"$work/node-ready.log") &
node_watch=$!
holders+=("$node_watch")
eventually 300 restarted plain-srv-b "$plain_restarts" || die "plain-srv-b did not restart"
eventually 300 restarted fast-srv-b "$fast_restarts" || die "fast-srv-b did not restart"
kc wait --for=condition=Ready "node/${workers[1]}" --timeout="$timeout" >/dev/null
kn wait --for=condition=Ready pod/fast-srv-b pod/plain-srv-b --timeout="$timeout" >/dev/null
# routes_before_pods: in the node's samples, the first with a pod veth has every route.
routes_before_pods() {
	local want samples first
	want=$(wc -w <<<"$other_cidrs")
	samples=$(cat "$work/restart-samples.log")
	first=$(awk '$3 > 0 { print; exit }' <<<"$samples")
	log "after the restart: routes $(awk -v w="$want" '$2 == w { print $1; exit }' \
		<<<"$samples") all in, first pod veth $(awk '{ print $1 }' <<<"$first") (epoch s);" \
		"the node said: $(grep -v '^kubelet is posting ready status' "$work/node-ready.log" |
			sort -u | head -c 300)"
	[ -n "$first" ] && [ "$(awk '{ print $2 }' <<<"$first")" = "$want" ]
}
check "restart: no pod wired before velod's routes to the other nodes were in" \
	routes_before_pods
kill "$node_watch" "$node_sampler" 2>/dev/null || true
# No wait for the velo pod: the node's pods being Ready means its routes are in.
check "restart: the worker's pods are reachable again" eventually 10 reach plain-cli-a plain-srv-b
check "restart: annotated pod reachable again" eventually 10 reach fast-cli-a fast-srv-b
check "restart: nothing leaked on ${workers[1]}" nothing_leaked "${workers[1]}"

# Churn: $churn pods created and deleted, half of them annotated; nothing stays behind.
log "churn: $churn pods"
for i in $(seq 1 "$churn"); do
	annotations=
	[ $((i % 2)) = 0 ] && annotations=$(printf '  annotations:\n    %s' "$fast_annotations")
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: churn-$i
  labels: {app: churn}
$annotations
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: main
      image: $test_image
      command: ["sleep", "3600"]
EOF
done | kn apply -f - >/dev/null
all_churn_ready() {
	kn wait --for=condition=Ready pod -l app=churn --timeout=600s >/dev/null
}
check "churn: $churn pods Ready" all_churn_ready
kn delete pod -l app=churn --wait=true --timeout=600s >/dev/null
for node in "${workers[@]}"; do
	check "churn: nothing leaked on $node" nothing_leaked "$node"
done

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]

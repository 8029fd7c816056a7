#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# velo end to end on kind: builds the image from the Containerfile, creates a cluster with no
# default CNI (e2e/kind/cluster.yaml: one control plane, two workers), loads the image, applies
# manifests/velo.yaml, waits for the DaemonSet and the nodes, then checks connectivity with data
# (same node, cross node, node to pod, Service via kube-proxy, DNS) for pods without annotations
# and pods with velo.dev/fastpath: tc and velo.dev/sockmap: "true". Deletes the cluster at the end.
# Needs Docker, kind and kubectl, and pulls busybox from Docker Hub (e2e/README.md).
# Ends with "N passed, N failed"; exit status 0 only if nothing failed.
#
# Environment: VELO_E2E_CLUSTER (velo-e2e), VELO_E2E_IMAGE (velo:dev), VELO_E2E_TEST_IMAGE
# (busybox:1.36), VELO_E2E_KEEP=1 keeps the cluster, VELO_E2E_SKIP_BUILD=1 uses an existing
# image, VELO_E2E_TIMEOUT (300s).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cluster=${VELO_E2E_CLUSTER:-velo-e2e}
image=${VELO_E2E_IMAGE:-velo:dev}
test_image=${VELO_E2E_TEST_IMAGE:-busybox:1.36}
timeout=${VELO_E2E_TIMEOUT:-300s}
ns=velo-e2e
passed=0 failed=0

log() { printf '== %s\n' "$*" >&2; }
die() {
	printf 'e2e: error: %s\n' "$*" >&2
	exit 1
}
kc() { kubectl --context "kind-$cluster" "$@"; }

diagnose() {
	local pod
	log "diagnostics"
	kc get nodes -o wide || true
	kc -n velo-system get pods -o wide || true
	for pod in $(kc -n velo-system get pods -o name 2>/dev/null); do
		kc -n velo-system logs "$pod" --all-containers --prefix --tail=40 || true
	done
	kc -n "$ns" get pods -o wide 2>/dev/null || true
}

cleanup() {
	local rc=$?
	[ "$rc" -eq 0 ] || diagnose
	if [ "${VELO_E2E_KEEP:-0}" = 1 ]; then
		log "keeping cluster $cluster (kind delete cluster --name $cluster)"
	else
		kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
	fi
	exit "$rc"
}

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

for cmd in docker kind kubectl; do
	command -v "$cmd" >/dev/null || die "$cmd is not installed (e2e/README.md)"
done
docker info >/dev/null 2>&1 || die "no Docker engine answers (e2e/README.md)"

trap cleanup EXIT

if [ "${VELO_E2E_SKIP_BUILD:-0}" != 1 ]; then
	log "building $image"
	docker build -f "$top/Containerfile" -t "$image" "$top"
fi

log "creating kind cluster $cluster"
# No --wait: without a CNI the nodes stay NotReady until velo is installed.
kind create cluster --name "$cluster" --config "$top/e2e/kind/cluster.yaml"
kind load docker-image "$image" --name "$cluster"

log "installing velo"
sed "s#image: velo:dev#image: $image#" "$top/manifests/velo.yaml" | kc apply -f -
kc -n velo-system rollout status daemonset/velo --timeout="$timeout"
kc wait --for=condition=Ready node --all --timeout="$timeout"
kc -n kube-system rollout status deployment/coredns --timeout="$timeout"

mapfile -t workers < <(kc get nodes -l '!node-role.kubernetes.io/control-plane' \
	-o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
[ "${#workers[@]}" -ge 2 ] || die "expected two workers, found ${#workers[@]}"
control_plane=$(kc get nodes -l node-role.kubernetes.io/control-plane \
	-o jsonpath='{.items[0].metadata.name}')

# Each node's conflist carries its own podCIDR as the host-local range.
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

# pod_yaml NAME NODE ROLE ANNOTATED: a busybox pod pinned to NODE; servers serve their own
# name at / and a 4 MiB random blob (with its md5) on port 8080.
pod_yaml() {
	local name=$1 node=$2 role=$3 annotated=$4 command
	if [ "$role" = server ]; then
		command='mkdir -p /www && hostname >/www/index.html &&
          dd if=/dev/urandom of=/www/blob bs=1M count=4 2>/dev/null &&
          md5sum /www/blob | cut -d" " -f1 >/www/blob.md5 &&
          exec httpd -f -p 8080 -h /www'
	else
		command='exec sleep 3600'
	fi
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
  labels:
    app: $name
EOF
	if [ "$annotated" = 1 ]; then
		cat <<'EOF'
  annotations:
    velo.dev/fastpath: tc
    velo.dev/sockmap: "true"
EOF
	fi
	cat <<EOF
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: $test_image
      command: ["sh", "-c", '$command']
      ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: $name
  namespace: $ns
spec:
  selector:
    app: $name
  ports:
    - port: 80
      targetPort: 8080
EOF
}

log "starting test pods"
kc create namespace "$ns"
{
	for variant in plain fast; do
		annotated=0
		[ "$variant" = plain ] || annotated=1
		pod_yaml "$variant-srv-a" "${workers[0]}" server "$annotated"
		pod_yaml "$variant-cli-a" "${workers[0]}" client "$annotated"
		pod_yaml "$variant-srv-b" "${workers[1]}" server "$annotated"
	done
} | kc apply -f -
kc -n "$ns" wait --for=condition=Ready pod --all --timeout="$timeout"

pod_ip() { kc -n "$ns" get pod "$1" -o jsonpath='{.status.podIP}'; }
svc_ip() { kc -n "$ns" get service "$1" -o jsonpath='{.spec.clusterIP}'; }

# fetch_name CLIENT URL SERVER: CLIENT gets URL and the answer is SERVER's name.
fetch_name() {
	local got
	got=$(kc -n "$ns" exec "$1" -- wget -qO- -T 5 "$2") || return 1
	[ "$got" = "$3" ] || {
		printf '    got "%s", want "%s"\n' "$got" "$3"
		return 1
	}
}

# fetch_blob CLIENT BASE_URL: the 4 MiB blob arrives intact (md5 as the server computed it).
fetch_blob() {
	local want got
	want=$(kc -n "$ns" exec "$1" -- wget -qO- -T 5 "$2/blob.md5") || return 1
	got=$(kc -n "$ns" exec "$1" -- sh -c "wget -qO- -T 20 '$2/blob' | md5sum" | cut -d' ' -f1)
	[ -n "$want" ] && [ "$want" = "$got" ]
}

# node_fetch NODE URL SERVER: the node itself (its root netns) reaches the pod.
node_fetch() {
	local got
	got=$(docker exec "$1" curl -fsS --max-time 5 "$2") || return 1
	[ "$got" = "$3" ]
}

dns_resolves() {
	kc -n "$ns" exec "$1" -- nslookup "$2" >/dev/null
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
	check "$variant: Service ClusterIP (kube-proxy) to a remote pod" \
		fetch_name "$cli" "http://$(svc_ip "$srv_b")/" "$srv_b"
	check "$variant: Service ClusterIP to a local pod" \
		fetch_name "$cli" "http://$(svc_ip "$srv_a")/" "$srv_a"
	check "$variant: DNS kubernetes.default" dns_resolves "$cli" \
		kubernetes.default.svc.cluster.local
	check "$variant: Service by DNS name" \
		fetch_name "$cli" "http://$srv_b.$ns.svc.cluster.local/" "$srv_b"
done
# A shortcut needs both ends opted in: an annotated client to a plain server falls back to the
# routed path and must still work.
check "mixed: annotated client to plain server, same node" \
	fetch_name fast-cli-a "http://$(pod_ip plain-srv-a):8080/" plain-srv-a
check "mixed: plain client to annotated server, same node" \
	fetch_name plain-cli-a "http://$(pod_ip fast-srv-a):8080/" fast-srv-a

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]

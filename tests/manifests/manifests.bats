#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
#
# velo's Kubernetes packaging, checked offline (no cluster, no root): yamllint, the structure of
# manifests/velo.yaml and e2e/kind/cluster.yaml, shellcheck of the scripts, and
# hack/install-cni.sh run for real against temp dirs standing in for the host's /opt/cni/bin and
# /etc/cni/net.d, with a fake service account and Node. The only traffic is on loopback (a
# velod from build/ answering /healthz), or none at all (file:// URLs).

REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
INSTALL_CNI=$REPO/hack/install-cni.sh
CHECK="python3 $REPO/tests/manifests/check_manifests.py"

setup() {
	cd "$REPO" || return 1
	VT=$(mktemp -d /tmp/velotest-manifests.XXXXXX)
	mkdir -p "$VT/src" "$VT/sa" "$VT/host/opt/cni/bin" "$VT/host/etc/cni/net.d" "$VT/stage"
	printf '#!/bin/sh\necho velo v1\n' >"$VT/src/velo"
	chmod 0755 "$VT/src/velo"
	printf 'token-one' >"$VT/sa/token"
	printf -- '-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n' >"$VT/sa/ca.crt"
	# The ConfigMap's own conflist template, so the test covers what ships.
	python3 -c 'import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc.get("kind") == "ConfigMap":
        sys.stdout.write(doc["data"][sys.argv[2]])' \
		manifests/velo.yaml 10-velo.conflist >"$VT/template.conflist"
	cat >"$VT/node.json" <<-'EOF'
		{"apiVersion": "v1", "kind": "NodeList", "items": [{"kind": "Node",
		 "metadata": {"name": "velotest-node"},
		 "spec": {"podCIDR": "10.244.2.0/24",
		          "podCIDRs": ["10.244.2.0/24", "fd00:10:244:2::/64"]}}]}
	EOF
	export CNI_BIN_DIR=$VT/host/opt/cni/bin CNI_NET_DIR=$VT/host/etc/cni/net.d
	export VELO_SRC_DIR=$VT/src SA_DIR=$VT/sa VELO_STAGE_DIR=$VT/stage
	export VELO_CONF_TEMPLATE=$VT/template.conflist VELO_NODE_JSON=$VT/node.json
	export VELO_REF_DIR=$VT/ref NODE_NAME=velotest-node
	export KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443
	export VELO_HEALTHZ_URL=file://$VT/healthz VELO_READY_TIMEOUT=5
	# The host's /run/velo/cni (a tmpfs on a node), where the active conflist lives.
	export VELO_CONF_TARGET_DIR=$VT/host/run/velo/cni HOST_CONF_TARGET_DIR=$VT/host/run/velo/cni
	unset VELO_POD_CIDRS VELO_K8S_SERVER
	CONFLIST=$CNI_NET_DIR/10-velo.conflist
	CONF_TARGET=$VELO_CONF_TARGET_DIR/10-velo.conflist
	KUBECONFIG_FILE=$CNI_NET_DIR/velo.d/kubeconfig
	BG_PID=
}

teardown() {
	if [ -n "$BG_PID" ]; then
		kill "$BG_PID" 2>/dev/null || true
		wait "$BG_PID" 2>/dev/null || true
	fi
	rm -rf "$VT"
}

need() {
	command -v "$1" >/dev/null || {
		echo "$1 is not installed: hack/install-deps.sh installs it" >&2
		return 1
	}
}

# No temp file of write_atomic may be left behind in DIR.
no_leftovers() {
	! find "$1" -name '.*velo-tmp*' | grep -q .
}

wait_for_file() {
	local tries=50
	while [ ! -e "$1" ] && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ -e "$1" ]
}

# ------------------------------------------------------------------ lint and structure

@test "yamllint: manifests and the kind config are clean (.yamllint)" {
	need yamllint
	run yamllint --strict -c .yamllint manifests/ e2e/kind/
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "manifests: every object velo needs, namespaced objects in velo-system" {
	run $CHECK kinds
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "manifests: RBAC is get/list/watch pods and clusternetworkpolicies, list/watch nodes, services, namespaces, endpointslices, networkpolicies, create/patch events: no wildcards, no secrets, no other writes" {
	run $CHECK rbac
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "manifests: the ClusterNetworkPolicy CRD is network-policy-api's experimental file, unchanged, at the pinned version, serving v1beta1 and v1alpha2" {
	run $CHECK crd
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the CRD check fails on an edited CRD, another version pin, the standard channel" {
	sed '0,/^    shortNames:/s//    shortNames:\n    - clusternetpol/' manifests/velo.yaml \
		>"$VT/edited.yaml"
	run $CHECK crd --manifest "$VT/edited.yaml"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"edited by hand"* ]]
	sed 's/^NETPOL_API_VERSION=.*/NETPOL_API_VERSION=v0.2.0/' hack/kind/versions.sh \
		>"$VT/versions.sh"
	run $CHECK crd --versions "$VT/versions.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"want sigs.k8s.io/network-policy-api@v0.2.0"* ]]
	[[ "$output" == *"bundle-version v0.3.0, want v0.2.0"* ]]
	sed 's#^\(    policy.networking.k8s.io/channel:\) experimental#\1 standard#' manifests/velo.yaml \
		>"$VT/standard.yaml"
	run $CHECK crd --manifest "$VT/standard.yaml"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"experimental channel"* ]]
}

@test "manifests: DaemonSet hostNetwork, all taints, system-node-critical, bpffs, probes" {
	run $CHECK daemonset
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "manifests: ConfigMap conflist and velod.json are valid and agree" {
	run $CHECK configmap
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "README: the conflist example declares velo's capabilities and chains bandwidth, portmap" {
	run $CHECK readme
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "kind config: default CNI off, one control plane and two workers" {
	run $CHECK kind
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "structural checks fail on broken manifests (wildcard, secrets, a write beyond Events, no Bidirectional, no tmpfs conflist)" {
	sed 's/verbs: \["get", "list", "watch"\]/verbs: ["*"]/' manifests/velo.yaml >"$VT/wild.yaml"
	run $CHECK rbac --manifest "$VT/wild.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"wildcard in verbs"* ]]
	sed 's/resources: \["pods"\]/resources: ["pods", "secrets"]/' manifests/velo.yaml \
		>"$VT/secrets.yaml"
	run $CHECK rbac --manifest "$VT/secrets.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"secrets"* ]]
	sed 's/verbs: \["create", "patch"\]/verbs: ["create", "patch", "delete"]/' manifests/velo.yaml \
		>"$VT/delete.yaml"
	run $CHECK rbac --manifest "$VT/delete.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"events: write verbs ['delete']"* ]]
	sed 's/mountPropagation: Bidirectional/mountPropagation: HostToContainer/' \
		manifests/velo.yaml >"$VT/prop.yaml"
	run $CHECK daemonset --manifest "$VT/prop.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Bidirectional"* ]]
	sed 's/- operator: Exists/- operator: Exists\n          key: x/' manifests/velo.yaml \
		>"$VT/taint.yaml"
	run $CHECK daemonset --manifest "$VT/taint.yaml"
	[ "$status" -eq 1 ]
	# The conflist's tmpfs on a persistent host dir: Ready before routes after a reboot.
	python3 -c 'import sys
text = open(sys.argv[1]).read()
marker = "- name: velo-run\n          hostPath:\n            path: /run/velo"
assert marker in text
print(text.replace(marker, marker.replace("/run/velo", "/var/lib/velo-run")), end="")' \
		manifests/velo.yaml >"$VT/run.yaml"
	run $CHECK daemonset --manifest "$VT/run.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the conflist's tmpfs"* ]]
	sed 's/disableDefaultCNI: true/disableDefaultCNI: false/' e2e/kind/cluster.yaml \
		>"$VT/kind.yaml"
	run $CHECK kind --kind "$VT/kind.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"disableDefaultCNI"* ]]
}

@test "shellcheck: hack/install-cni.sh, the e2e and the kind cluster's scripts" {
	need shellcheck
	run shellcheck -x hack/install-cni.sh e2e/kind/*.sh hack/kind.sh hack/kind/*.sh \
		hack/kind/shim/docker hack/kind/node/entrypoint
	echo "$output"
	[ "$status" -eq 0 ]
}

# ------------------------------------------------------------------ install-cni.sh

@test "install: binary copied by rename (new inode, no temp left), 0755" {
	printf 'old velo\n' >"$CNI_BIN_DIR/velo"
	old_inode=$(stat -c %i "$CNI_BIN_DIR/velo")
	run "$INSTALL_CNI" install
	echo "$output"
	[ "$status" -eq 0 ]
	cmp "$VT/src/velo" "$CNI_BIN_DIR/velo"
	[ "$(stat -c %a "$CNI_BIN_DIR/velo")" = 755 ]
	# A rename gives a new inode; writing in place (what would hit a running velo) would not.
	[ "$(stat -c %i "$CNI_BIN_DIR/velo")" != "$old_inode" ]
	no_leftovers "$CNI_BIN_DIR"
	no_leftovers "$CNI_NET_DIR"
}

@test "install: the node's podCIDRs become the conflist's velo IPAM ranges (dual stack)" {
	run "$INSTALL_CNI" install
	echo "$output"
	[ "$status" -eq 0 ]
	staged=$VT/stage/10-velo.conflist
	run jq -c '.plugins[] | select(.type == "velo") | .ipam.ranges' "$staged"
	[ "$output" = '[[{"subnet":"10.244.2.0/24"}],[{"subnet":"fd00:10:244:2::/64"}]]' ]
	run jq -r '.plugins[] | select(.type == "velo") | .kubeconfig' "$staged"
	[ "$output" = /etc/cni/net.d/velo.d/kubeconfig ]
	# The rest of the template passes through.
	run jq -r '.name, (.plugins | map(.type) | join(" "))' "$staged"
	[ "$output" = $'velo\nvelo bandwidth portmap' ]
}

@test "install: a template with host-local IPAM gets the podCIDRs as its ranges too" {
	jq '.plugins[0].ipam = {"type": "host-local"}' "$VELO_CONF_TEMPLATE" >"$VT/host-local.conflist"
	VELO_CONF_TEMPLATE="$VT/host-local.conflist" run "$INSTALL_CNI" install
	echo "$output"
	[ "$status" -eq 0 ]
	run jq -c '.plugins[0].ipam' "$VT/stage/10-velo.conflist"
	[ "$output" = '{"type":"host-local","ranges":[[{"subnet":"10.244.2.0/24"}],[{"subnet":"fd00:10:244:2::/64"}]]}' ]
}

@test "install: a Node with only the old spec.podCIDR, and VELO_POD_CIDRS, work too" {
	echo '{"kind": "Node", "spec": {"podCIDR": "10.244.7.0/24"}}' >"$VT/node.json"
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	run jq -c '.plugins[0].ipam.ranges' "$VT/stage/10-velo.conflist"
	[ "$output" = '[[{"subnet":"10.244.7.0/24"}]]' ]
	VELO_POD_CIDRS=10.9.0.0/24,fd09::/64 run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	run jq -c '.plugins[0].ipam.ranges' "$VT/stage/10-velo.conflist"
	[ "$output" = '[[{"subnet":"10.9.0.0/24"}],[{"subnet":"fd09::/64"}]]' ]
}

@test "install: a node without podCIDRs fails after the wait, naming the cause" {
	echo '{"kind": "Node", "spec": {}}' >"$VT/node.json"
	VELO_WAIT_SECONDS=0 run "$INSTALL_CNI" install
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no spec.podCIDRs"* ]]
	[ ! -e "$VT/stage/10-velo.conflist" ]
	VELO_POD_CIDRS='10.0.0.0/24;rm' run "$INSTALL_CNI" install
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not a CIDR"* ]]
}

@test "install: kubeconfig is 0600 JSON with the token, CA path and API server" {
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$KUBECONFIG_FILE")" = 600 ]
	[ "$(stat -c %a "$CNI_NET_DIR/velo.d")" = 700 ]
	cmp "$SA_DIR/ca.crt" "$CNI_NET_DIR/velo.d/ca.crt"
	run jq -r '.users[0].user.token, .clusters[0].cluster.server,
		.clusters[0].cluster["certificate-authority"], .["current-context"]' "$KUBECONFIG_FILE"
	[ "$output" = $'token-one\nhttps://10.96.0.1:443\n/etc/cni/net.d/velo.d/ca.crt\nvelo' ]
	# IPv6 API server addresses are bracketed.
	KUBERNETES_SERVICE_HOST=fd00:96::1 run "$INSTALL_CNI" install
	[ "$(jq -r '.clusters[0].cluster.server' "$KUBECONFIG_FILE")" = "https://[fd00:96::1]:443" ]
	# Nothing with the token is left in the staging dir.
	run grep -rq token-one "$VT/stage"
	[ "$status" -eq 1 ]
}

@test "install: never writes the conflist itself; host-local etc. only where missing" {
	mkdir -p "$VT/ref"
	for plugin in host-local bandwidth portmap loopback; do
		printf '#!/bin/sh\necho ref %s\n' "$plugin" >"$VT/ref/$plugin"
		chmod 0755 "$VT/ref/$plugin"
	done
	printf 'node own host-local\n' >"$CNI_BIN_DIR/host-local"
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	[ ! -e "$CONFLIST" ]
	[ "$(cat "$CNI_BIN_DIR/host-local")" = "node own host-local" ]
	cmp "$VT/ref/bandwidth" "$CNI_BIN_DIR/bandwidth"
	cmp "$VT/ref/portmap" "$CNI_BIN_DIR/portmap"
	cmp "$VT/ref/loopback" "$CNI_BIN_DIR/loopback"
}

@test "activate: no conflist until velod is ready, then the tmpfs copy linked by rename" {
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	VELO_READY_TIMEOUT=2 run "$INSTALL_CNI" activate
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"velod not ready"* ]]
	[ ! -e "$CONFLIST" ]
	[ ! -L "$CONFLIST" ]

	# An earlier velo's conflist, a plain file: replaced by the link.
	printf '{"old": true}\n' >"$CONFLIST"
	old_inode=$(stat -c %i "$CONFLIST")
	VELO_ONESHOT=1 VELO_READY_TIMEOUT=30 "$INSTALL_CNI" activate 2>"$VT/activate.log" &
	BG_PID=$!
	sleep 1.5
	# Still waiting for velod: the old conflist is untouched.
	[ "$(cat "$CONFLIST")" = '{"old": true}' ]
	touch "$VT/healthz"
	wait "$BG_PID"
	BG_PID=
	[ -L "$CONFLIST" ]
	[ "$(readlink "$CONFLIST")" = "$CONF_TARGET" ]
	cmp "$VT/stage/10-velo.conflist" "$CONF_TARGET"
	cmp "$VT/stage/10-velo.conflist" "$CONFLIST"
	[ "$(stat -c %i "$CONFLIST")" != "$old_inode" ]
	[ "$(stat -c %a "$CONF_TARGET")" = 644 ]
	no_leftovers "$CNI_NET_DIR"
	no_leftovers "$VELO_CONF_TARGET_DIR"
}

@test "activate after a reboot: the link dangles until velod is ready, then a fresh one is renamed in" {
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	touch "$VT/healthz"
	VELO_ONESHOT=1 run "$INSTALL_CNI" activate
	[ "$status" -eq 0 ]
	[ -e "$CONFLIST" ]
	# The reboot: the node's /run is a new tmpfs, velod answers 503 until it has routed.
	rm -rf "$VT/host/run"
	rm "$VT/healthz"
	[ -L "$CONFLIST" ]
	# What the runtime reads: nothing it can load (containerd reports NetworkReady=false).
	run cat "$CONFLIST"
	[ "$status" -ne 0 ]
	old_inode=$(stat -c %i "$CONFLIST")
	VELO_ONESHOT=1 VELO_READY_TIMEOUT=30 "$INSTALL_CNI" activate 2>"$VT/activate.log" &
	BG_PID=$!
	sleep 1.5
	[ ! -e "$CONFLIST" ]
	[ "$(stat -c %i "$CONFLIST")" = "$old_inode" ]
	touch "$VT/healthz"
	wait "$BG_PID"
	BG_PID=
	cmp "$VT/stage/10-velo.conflist" "$CONFLIST"
	# A new directory entry (rename), so the runtime's watch on the conf dir loads it again:
	# writing the target alone would not tell it.
	[ "$(stat -c %i "$CONFLIST")" != "$old_inode" ]
	no_leftovers "$CNI_NET_DIR"
}

@test "activate with nothing changed leaves the link as it is (no runtime reload)" {
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	touch "$VT/healthz"
	VELO_ONESHOT=1 run "$INSTALL_CNI" activate
	[ "$status" -eq 0 ]
	link_inode=$(stat -c %i "$CONFLIST")
	target_inode=$(stat -c %i "$CONF_TARGET")
	VELO_ONESHOT=1 run "$INSTALL_CNI" activate
	[ "$status" -eq 0 ]
	[[ "$output" == *"was current"* ]]
	[ "$(stat -c %i "$CONFLIST")" = "$link_inode" ]
	[ "$(stat -c %i "$CONF_TARGET")" = "$target_inode" ]
}

@test "activate: keeps the kubeconfig token fresh, stays 0600, exits on SIGTERM" {
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	touch "$VT/healthz"
	VELO_REFRESH_SECONDS=1 "$INSTALL_CNI" activate 2>"$VT/activate.log" &
	BG_PID=$!
	wait_for_file "$CONFLIST"
	printf 'token-two' >"$SA_DIR/token.new"
	mv "$SA_DIR/token.new" "$SA_DIR/token"
	tries=50
	until [ "$(jq -r '.users[0].user.token' "$KUBECONFIG_FILE")" = token-two ]; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || { cat "$VT/activate.log"; false; }
		sleep 0.1
	done
	[ "$(stat -c %a "$KUBECONFIG_FILE")" = 600 ]
	kill -TERM "$BG_PID"
	wait "$BG_PID"
	BG_PID=
}

@test "activate: refuses to run without a staged conflist" {
	touch "$VT/healthz"
	run "$INSTALL_CNI" activate
	[ "$status" -ne 0 ]
	[[ "$output" == *"not staged"* ]]
	[ ! -e "$CONFLIST" ]
}

@test "uninstall: removes the conflist and its link, kubeconfig dir and velo binary, nothing else" {
	run "$INSTALL_CNI" install
	touch "$VT/healthz"
	VELO_ONESHOT=1 run "$INSTALL_CNI" activate
	[ -e "$CONFLIST" ]
	printf 'other\n' >"$CNI_NET_DIR/05-other.conflist"
	printf 'other\n' >"$CNI_BIN_DIR/other"
	run "$INSTALL_CNI" uninstall
	[ "$status" -eq 0 ]
	[ ! -L "$CONFLIST" ]
	[ ! -e "$CONF_TARGET" ]
	[ ! -e "$CNI_NET_DIR/velo.d" ]
	[ ! -e "$CNI_BIN_DIR/velo" ]
	[ -e "$CNI_NET_DIR/05-other.conflist" ]
	[ -e "$CNI_BIN_DIR/other" ]
}

@test "activate against the real velod with the ConfigMap's velod.json (loopback)" {
	velod=${BUILD:-$REPO/build}/velod
	[ -x "$velod" ] || skip "build/velod not built (make)"
	port=$((20000 + RANDOM % 20000))
	# The shipped config; only paths, port and BPF sampling changed so it runs unprivileged,
	# and the API watches (Nodes, Services, policy's) off: outside a cluster there is no API to
	# ask. This velod runs in the machine's own netns: its nftables work (the source guard, the
	# FORWARD accept rules) is off, so the machine's firewall is left as it was.
	python3 -c 'import sys, yaml, json
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc.get("kind") == "ConfigMap":
        config = json.loads(doc["data"]["velod.json"])
vt, port = sys.argv[2], sys.argv[3]
config.update(stateDir=vt + "/state", runDir=vt + "/run", bpffsDir=vt + "/bpf",
              listen="127.0.0.1:" + port, sampleIntervalSeconds=0, inCluster=False,
              servicesSource="none", policySource="none", sourceGuardPrefix="",
              forwardAcceptPrefix="")
print(json.dumps(config))' manifests/velo.yaml "$VT" "$port" >"$VT/velod.json"
	run "$INSTALL_CNI" install
	[ "$status" -eq 0 ]
	"$velod" --config "$VT/velod.json" 2>"$VT/velod.log" &
	BG_PID=$!
	VELO_HEALTHZ_URL=http://127.0.0.1:$port/healthz VELO_ONESHOT=1 VELO_READY_TIMEOUT=20 \
		run "$INSTALL_CNI" activate
	echo "$output"
	cat "$VT/velod.log"
	[ "$status" -eq 0 ]
	cmp "$VT/stage/10-velo.conflist" "$CONFLIST"
}

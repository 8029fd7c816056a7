# shellcheck shell=bash disable=SC2154 # kind.sh sets here, top, cluster, timeout and velo_image
# SPDX-License-Identifier: Apache-2.0
# `hack/kind.sh up --cni NAME`: the CNIs velo is measured against (issue 42), in the same kind
# cluster, on the same node image and Kubernetes build. Sourced by hack/kind.sh, whose cluster,
# here, top, kc, log and die it uses. NAME:
#   velo           velo's shipped manifest (kind.sh's own path, not this file)
#   velo-best      velo with its fast paths as node defaults (velo-best.json: tc fast path,
#                  sockmap with the probed kernel bugs accepted, connect-time Services) and
#                  velod's crossNodeTc
#   cilium         Cilium, native routing, kube-proxy kept, no socket LB (cilium-values.yaml)
#   cilium-best    Cilium's kube-proxy replacement and socket LB, no kube-proxy at all
#   flannel        flannel, host-gw backend; flannel-vxlan: its VXLAN backend
# shellcheck source=hack/kind/peers/versions.sh
. "$here/kind/peers/versions.sh"

peer_names="velo velo-best cilium cilium-best flannel flannel-vxlan"

# peer_config NAME FAMILY CONFIG: the kind config NAME's cluster is created from.
peer_config() {
	case " $peer_names " in *" $1 "*) ;; *) die "up: unknown CNI '$1' ($peer_names)" ;; esac
	[ "$1" = velo ] || [ "$2" = ipv4 ] || die "up: --cni $1 is IPv4 only"
	if [ "$1" = cilium-best ]; then
		echo "$here/kind/peers/cluster-no-kube-proxy.yaml"
	else
		echo "$3"
	fi
}

# peer_build NAME: the peer's programs and images (under the build lock, as cmd_build), and
# the benchmark pods' image.
peer_build() {
	exec 9>"$VELO_KIND_CACHE/build.lock"
	flock 9
	"$here/kind/peers/build.sh" "$1" bench
	exec 9>&-
}

# peer_install NAME: NAME into the cluster, then every node Ready and CoreDNS rolled out.
# Each step returns on failure: kind.sh calls it after `||`, where set -e does not hold.
peer_install() {
	local name=$1
	log "installing $name"
	case $name in
	velo-best)
		kind load docker-image "$velo_image" --name "$cluster" || return 1
		"$here/kind/manifest.py" "$top/manifests/velo.yaml" "$top/e2e/kind/velo-overrides.json" \
			"$velo_image" "$here/kind/peers/velo-best.json" | kc apply -f - || return 1
		kc -n velo-system rollout status daemonset/velo --timeout="$timeout" || return 1
		;;
	cilium | cilium-best)
		kind load docker-image "velo-kind/cilium:$CILIUM_VERSION" \
			"velo-kind/cilium-operator-generic:$CILIUM_VERSION" --name "$cluster" || return 1
		cilium_manifest "$name" | kc apply -f - || return 1
		kc -n kube-system rollout status daemonset/cilium --timeout="$timeout" || return 1
		kc -n kube-system rollout status deployment/cilium-operator --timeout="$timeout" ||
			return 1
		;;
	flannel | flannel-vxlan)
		local backend=host-gw
		[ "$name" = flannel ] || backend=vxlan
		kind load docker-image "velo-kind/flannel:$FLANNEL_VERSION" --name "$cluster" || return 1
		sed -e "s/BACKEND/$backend/" -e "s/FLANNEL_VERSION/$FLANNEL_VERSION/" \
			"$here/kind/peers/flannel.yaml" | kc apply -f - || return 1
		kc -n kube-flannel rollout status daemonset/kube-flannel-ds --timeout="$timeout" ||
			return 1
		;;
	esac
	kc wait --for=condition=Ready node --all --timeout="$timeout" &&
		kc -n kube-system rollout status deployment/coredns --timeout="$timeout"
}

# cilium_manifest NAME: Cilium's chart from the module, rendered with helm and the values here.
cilium_manifest() {
	local chart=$PEERS_CACHE/cilium-$CILIUM_VERSION/src/install/kubernetes/cilium
	local -a values=(-f "$here/kind/peers/cilium-values.yaml"
		--set "image.override=velo-kind/cilium:$CILIUM_VERSION"
		--set "operator.image.override=velo-kind/cilium-operator-generic:$CILIUM_VERSION")
	[ "$1" = cilium ] || values+=(-f "$here/kind/peers/cilium-best-values.yaml" \
		--set "k8sServiceHost=$cluster-control-plane")
	"$PEERS_CACHE/bin/helm-$HELM_VERSION" template cilium "$chart" --namespace kube-system \
		"${values[@]}"
}

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds every image the kind cluster runs, locally, with no registry:
#   velo-kind/base:bookworm   Debian 12 from debootstrap, imported into Docker
#   registry.k8s.io/...       the control plane, kube-proxy, etcd, CoreDNS, pause and the e2e
#                             test images (agnhost, jessie-dnsutils, busybox, nginx), from the
#                             binaries of build-bins.sh and Debian packages; saved into one tar
#   velo:dev                  velo's own image (Containerfile) on the same base
#   velo-kind/node:<k8s>      the kind node (hack/kind/node/) with that tar baked in
# An image that exists is kept (the node image: while its inputs are the same);
# VELO_KIND_REBUILD=1 rebuilds all but the base.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=hack/kind/versions.sh
. "$here/versions.sh"

bin=$VELO_KIND_CACHE/bin/$K8S_VERSION
base=velo-kind/base:$DEBIAN_SUITE
node=velo-kind/node:$K8S_VERSION
velo_image=${VELO_IMAGE:-velo:dev}
rebuild=${VELO_KIND_REBUILD:-0}
work=$(mktemp -d /tmp/velo-kind-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

log() { printf '== images: %s\n' "$*" >&2; }
have() { [ "$rebuild" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

build_base() {
	local root=$VELO_KIND_CACHE/rootfs/$DEBIAN_SUITE
	docker image inspect "$base" >/dev/null 2>&1 && return 0
	log "$base from debootstrap"
	rm -rf "$root"
	mkdir -p "$root"
	debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" http://deb.debian.org/debian >&2
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
	tar -C "$root" -c . | docker import - "$base" >/dev/null
	rm -rf "$root"
}

# image TAG FILE...: builds TAG from the Dockerfile on stdin with FILEs in its context.
image() {
	local tag=$1 ctx
	shift
	have "$tag" && return 0
	log "$tag"
	ctx=$work/ctx.$RANDOM
	mkdir -p "$ctx"
	[ $# -eq 0 ] || cp -a "$@" "$ctx/"
	docker build -q --build-arg "BASE=$base" -t "$tag" -f - "$ctx" >/dev/null
	rm -rf "$ctx"
}

# A Go binary alone in an image: the control plane, etcd and CoreDNS need nothing else.
static_image() {
	local tag=$1 name=$2
	image "$tag" "$bin/$name" <<DOCKERFILE
FROM scratch
COPY $name /usr/local/bin/$name
ENV PATH=/usr/local/bin
ENTRYPOINT ["/usr/local/bin/$name"]
DOCKERFILE
}

build_pause() {
	have "registry.k8s.io/pause:$PAUSE_TAG" && return 0
	gcc -static -O2 -Wall -Werror -o "$work/pause" "$here/images/pause.c"
	image "registry.k8s.io/pause:$PAUSE_TAG" "$work/pause" <<'DOCKERFILE'
FROM scratch
COPY pause /pause
ENTRYPOINT ["/pause"]
DOCKERFILE
}

k8s_images() {
	local c
	for c in kube-apiserver kube-controller-manager kube-scheduler; do
		static_image "registry.k8s.io/$c:$K8S_VERSION" "$c"
	done
	static_image "registry.k8s.io/etcd:$ETCD_TAG" etcd
	static_image "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" coredns
	build_pause
	# kube-proxy programs iptables (nft backend, as the node) and conntrack.
	image "registry.k8s.io/kube-proxy:$K8S_VERSION" "$bin/kube-proxy" <<'DOCKERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends iptables conntrack kmod \
	&& rm -rf /var/lib/apt/lists/*
COPY kube-proxy /usr/local/bin/kube-proxy
DOCKERFILE
	# agnhost as its upstream Dockerfile lays it out (test/images/agnhost in the module): the
	# tools the tests exec (dig, curl, nc, iperf, bash), CoreDNS at /coredns, porter's TLS pair
	# at /localhost.{crt,key}, /uploads, and a user and group the security tests look for.
	local agnhost_src
	agnhost_src=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .Dir)/test/images/agnhost
	image "registry.k8s.io/e2e-test-images/agnhost:$AGNHOST_TAG" "$bin/agnhost" "$bin/coredns" \
		"$agnhost_src/porter/localhost.crt" "$agnhost_src/porter/localhost.key" <<'DOCKERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends curl netcat-openbsd \
		dnsutils iproute2 iputils-ping iperf bash conntrack iptables procps ca-certificates \
	&& rm -rf /var/lib/apt/lists/* \
	&& mkdir /uploads \
	&& groupadd -g 50000 group-defined-in-image \
	&& useradd -u 1000 -M -G group-defined-in-image user-defined-in-image
COPY coredns /coredns
COPY localhost.crt localhost.key /
COPY agnhost /agnhost
RUN ln -s agnhost /agnhost-2
EXPOSE 80 8080 8081 9376 5000
ENTRYPOINT ["/agnhost"]
CMD ["pause"]
DOCKERFILE
	# The DNS conformance tests query from this one: dig, getent and a shell (upstream: Debian
	# with dnsutils and CoreDNS).
	image "registry.k8s.io/e2e-test-images/jessie-dnsutils:$JESSIE_DNSUTILS_TAG" "$bin/coredns" \
		<<'DOCKERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends dnsutils \
	&& rm -rf /var/lib/apt/lists/*
COPY coredns /coredns
DOCKERFILE
	# Debian's busybox-static on the base (glibc's /etc/nsswitch.conf and friends), its applets
	# first on PATH. Its wget crashes with -T (1.35): the e2e wraps wget in timeout instead.
	image "registry.k8s.io/e2e-test-images/busybox:$BUSYBOX_TAG" /bin/busybox <<'DOCKERFILE'
ARG BASE
FROM ${BASE}
COPY busybox /bin/busybox
RUN mkdir -p /usr/local/busybox && /bin/busybox --install -s /usr/local/busybox
ENV PATH=/usr/local/busybox:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["sh"]
DOCKERFILE
	# Debian's nginx under the e2e name (the tests only need an HTTP server on port 80).
	image "registry.k8s.io/e2e-test-images/nginx:$NGINX_TAG" <<'DOCKERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends nginx-light \
	&& rm -rf /var/lib/apt/lists/* && ln -sf /dev/stdout /var/log/nginx/access.log \
	&& ln -sf /dev/stderr /var/log/nginx/error.log
CMD ["nginx", "-g", "daemon off;"]
DOCKERFILE
}

cluster_images() {
	printf '%s\n' \
		"registry.k8s.io/kube-apiserver:$K8S_VERSION" \
		"registry.k8s.io/kube-controller-manager:$K8S_VERSION" \
		"registry.k8s.io/kube-scheduler:$K8S_VERSION" \
		"registry.k8s.io/kube-proxy:$K8S_VERSION" \
		"registry.k8s.io/etcd:$ETCD_TAG" \
		"registry.k8s.io/coredns/coredns:$COREDNS_VERSION" \
		"registry.k8s.io/pause:$PAUSE_TAG" \
		"registry.k8s.io/e2e-test-images/agnhost:$AGNHOST_TAG" \
		"registry.k8s.io/e2e-test-images/busybox:$BUSYBOX_TAG" \
		"registry.k8s.io/e2e-test-images/nginx:$NGINX_TAG" \
		"registry.k8s.io/e2e-test-images/jessie-dnsutils:$JESSIE_DNSUTILS_TAG"
}

# The tags kubeadm will ask containerd for must be the ones built here.
check_kubeadm_images() {
	local want got
	want=$(cluster_images | head -n 7 | sort)
	got=$("$bin/kubeadm" config images list --kubernetes-version "$K8S_VERSION" | sort)
	[ "$want" = "$got" ] || {
		log "kubeadm asks for other images than versions.sh pins:"
		diff <(echo "$want") <(echo "$got") >&2 || true
		return 1
	}
}

# node_inputs: a digest of what the node image is made of (its files, the binaries baked in,
# the images' IDs), so a change to any of them rebuilds it.
node_inputs() {
	{
		cat "$here/node/"*
		sha256sum "$bin/kubelet" "$bin/kubeadm" "$bin/kubectl"
		cluster_images | xargs docker image inspect -f '{{.Id}}'
	} | sha256sum | cut -d' ' -f1
}

build_node() {
	local inputs
	inputs=$(node_inputs)
	[ "$(docker image inspect -f '{{index .Config.Labels "dev.velo.inputs"}}' "$node" \
		2>/dev/null)" = "$inputs" ] && have "$node" && return 0
	log "$node"
	mkdir -p "$work/node"
	# One tar: layers the images share are stored (and imported on each node) once.
	mapfile -t images < <(cluster_images)
	docker save -o "$work/node/images.tar" "${images[@]}"
	cp "$bin/kubelet" "$bin/kubeadm" "$bin/kubectl" "$work/node/"
	cp -a "$here/node" "$work/node/node"
	docker build -q --build-arg "BASE=$base" --build-arg "K8S_VERSION=$K8S_VERSION" \
		--label "dev.velo.inputs=$inputs" -t "$node" -f "$here/node/Dockerfile" "$work/node" \
		>/dev/null
}

build_velo() {
	log "$velo_image (Containerfile on $base)"
	docker build -q --build-arg "BASE=$base" -t "$velo_image" -f "$top/Containerfile" "$top" \
		>/dev/null
}

start=$(date +%s)
check_kubeadm_images
build_base
k8s_images
build_node
[ "${1:-}" = --no-velo ] || build_velo
log "done in $(($(date +%s) - start)) s"

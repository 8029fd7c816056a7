# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: Apache-2.0
# The pinned versions of everything the kind cluster is built from (sourced by hack/kind/*.sh).
# Kubernetes 1.34: the newest release whose kubelet still starts on a cgroup v1 host by
# default (1.35 turns failCgroupV1 on) and still talks CRI v1 to containerd 1.6, which is what
# Debian 12 packages and what these machines' Docker runs on.
K8S_VERSION=v1.34.4
# kubeadm's own pins for this release (`kubeadm config images list`; images.sh checks them).
ETCD_VERSION=v3.6.5
ETCD_TAG=3.6.5-0
COREDNS_VERSION=v1.12.1
PAUSE_TAG=3.10.1
KIND_VERSION=v0.30.0
AGNHOST_TAG=2.56
DEBIAN_SUITE=bookworm
# Build outputs survive between runs on one machine; a clean clone reuses them.
VELO_KIND_CACHE=${VELO_KIND_CACHE:-/var/cache/velo-kind}
export GOMODCACHE=$VELO_KIND_CACHE/go/mod GOCACHE=$VELO_KIND_CACHE/go/build
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
export PATH=/usr/local/go/bin:$PATH
# The e2e test images of this release (test/utils/image/manifest.go), built locally.
BUSYBOX_TAG=1.37.0-1
NGINX_TAG=1.14-4
JESSIE_DNSUTILS_TAG=1.7
# The ClusterNetworkPolicy API: its CRD in manifests/velo.yaml (hack/cnp-crd.sh) and the
# conformance suite hack/kind.sh cnp builds, one version for both.
NETPOL_API_VERSION=v0.3.0

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# manifests/velo.yaml ships the ClusterNetworkPolicy CRD of sigs.k8s.io/network-policy-api at
# the version hack/kind/versions.sh pins (NETPOL_API_VERSION), experimental channel (velo
# enforces its named ports and node peers, which the standard CRD's schema prunes). This script
# copies the module's config/crd/experimental file, byte for byte, between the two marker lines
# of the manifest, with a header naming its source and sha256; tests/manifests checks that the
# text between the markers still has that sha256 and the pinned version's annotations.
#
# Usage: hack/cnp-crd.sh [MANIFEST]   (MANIFEST: default manifests/velo.yaml; needs Go, which
# fetches the module from the Go module proxy into the kind cache's module folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/kind/versions.sh
. "$here/kind/versions.sh"
manifest=${1:-$here/../manifests/velo.yaml}
module=sigs.k8s.io/network-policy-api
channel=experimental
path=config/crd/$channel/policy.networking.k8s.io_clusternetworkpolicies.yaml
begin='# ClusterNetworkPolicy CRD: begin'
end='# ClusterNetworkPolicy CRD: end'

for marker in "$begin" "$end"; do
	[ "$(grep -c -- "^$marker" "$manifest")" -eq 1 ] || {
		echo "cnp-crd: want one line '$marker' in $manifest" >&2
		exit 1
	}
done
dir=$(go mod download -json "$module@$NETPOL_API_VERSION" | jq -r .Dir)
crd=$dir/$path
[ -f "$crd" ] || {
	echo "cnp-crd: no $path in $module@$NETPOL_API_VERSION" >&2
	exit 1
}
grep -q "^    policy.networking.k8s.io/bundle-version: $NETPOL_API_VERSION$" "$crd" || {
	echo "cnp-crd: $crd does not carry bundle-version $NETPOL_API_VERSION" >&2
	exit 1
}
sum=$(sha256sum "$crd" | cut -d' ' -f1)

spliced=$(mktemp /tmp/velo-cnp-crd.XXXXXX)
trap 'rm -f "$spliced"' EXIT
{
	sed -n "1,/^$begin/p" "$manifest"
	# yamllint judges velo's own YAML: the upstream file keeps its generator's style.
	printf '# yamllint disable\n'
	printf '# %s@%s %s, verbatim (hack/cnp-crd.sh)\n' "$module" "$NETPOL_API_VERSION" "$path"
	printf '# sha256 %s\n---\n' "$sum"
	cat "$crd"
	printf '# yamllint enable\n'
	sed -n "/^$end/,\$p" "$manifest"
} >"$spliced"
cat "$spliced" >"$manifest"
printf 'cnp-crd: %s@%s %s channel, sha256 %s\n' "$module" "$NETPOL_API_VERSION" "$channel" "$sum"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The NetworkPolicy truth table for the kernel matrix's guest, which has no python: run on the
# host when the initramfs is built (hack/kernel-initramfs.sh), it writes each case's policy file
# with the host table's own cases (tests/node/lib/guest_shared.bash) for the grid the guest will
# wire, and the verdicts tests/node/policy/policy_model.py gives for every probe.
#
# Usage: kernel/matrix/policy-table.sh OUT_DIR
# OUT_DIR gets: grid ("KEY ADDRESS" per pod: the guest pins each pod's address to it),
# probes-<src> (policy_probe's input per source), and per case (listed in cases) CASE.json (the
# policy file) and CASE.expect ("ID allow|deny"). The node probes from 10.98.0.1, as in the guest and on the host.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
# shellcheck source=tests/node/lib/guest_shared.bash
. "$top/tests/node/lib/guest_shared.bash"

VT_SUBNET4=10.99.0.0/24
node_addr=10.98.0.1
POL_KEYS=()
POL_PODS_JSON=
POL_SERVICES=0
declare -A POL_IP=()
host=2
for ns in "${POL_NAMESPACES[@]}"; do
	for name in "${POL_NAMES[@]}"; do
		POL_KEYS+=("$ns/$name")
		POL_IP[$ns/$name]=10.99.0.$host
		host=$((host + 1))
	done
done

rm -rf "$out"
mkdir -p "$out"
for key in "${POL_KEYS[@]}"; do
	echo "$key ${POL_IP[$key]}"
done >"$out/grid"
pol_probe_files "$out" "$node_addr"
for name in "${POL_CASES[@]}"; do
	pol_file "$(pol_case_policies "$name")" >"$out/$name.json"
	python3 "$top/tests/node/policy/policy_model.py" --node-addr "$node_addr" verdicts \
		"$out/$name.json" <"$out/model-probes" >"$out/$name.expect"
	# Every probe has a verdict, and a case that allows or denies everything checks little:
	# only "none" may.
	[ "$(wc -l <"$out/$name.expect")" -eq "$(wc -l <"$out/model-probes")" ] ||
		{ echo "policy-table: $name: verdicts missing" >&2; exit 1; }
	[ "$name" = none ] || grep -q ' deny$' "$out/$name.expect" ||
		{ echo "policy-table: $name: the model denies nothing" >&2; exit 1; }
	echo "$name"
done >"$out/cases"
rm "$out/model-probes"

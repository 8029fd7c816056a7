#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Upgrades of NetworkPolicy's programs: the next release's velod moves a selected pod's
# pol_from and pol_to links (or clsact filters), and an unselected pod's pol_deliver, to its own
# generation's programs (they share the pinned maps), then unpins the old generation; policy
# holds across.
# The next release is build/tests/velo-nextgen and velod-nextgen (mk/velod_nextgen.mk).

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib
load ../lib/upgrade_lib

setup() {
	vt_nextgen
	pol_setup
}

# x/a isolated both ways: namespace y may reach its TCP 80, it may reach namespace y. y/a is
# selected by nothing, so it gets pol_deliver (some local pod's egress is isolated).
ISOLATE_XA='{"podSelector": {"matchLabels": {"pod": "a"}}, "policyTypes": ["Ingress", "Egress"],
	"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}],
		"ports": [{"port": 80, "protocol": "TCP"}]}],
	"egress": [{"to": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}]}]}'

# link_prog HOST KIND: the program id the pod's policy hook runs: its pinned link's, or under
# VELO_TC_CLSACT its clsact filter's (one per hook and pod: pol_from at ingress, pol_to or
# pol_deliver at egress).
link_prog() {
	local dir=egress
	if [ -z "${VELO_TC_CLSACT:-}" ]; then
		vt_link_prog "$VTC_BPFFS" "$1_$2"
		return
	fi
	[ "$2" = pol_from ] && dir=ingress
	vt_node tc filter show dev "$1" "$dir" |
		awk '/ bpf / { for (i = 1; i < NF; i++) if ($i == "id") print $(i + 1) }'
}

@test "policy upgrade: the next release's velod moves pol_from, pol_to and pol_deliver to its programs, unpins the old generation; the truth table still holds" {
	upgrade_moves
}

@test "policy upgrade on clsact filters (VELO_TC_CLSACT, as kernels without tcx): the filters are replaced in place" {
	export VELO_TC_CLSACT=1
	upgrade_moves
	[ -z "$(find "$VTC_BPFFS/links" -name '*_pol_*' 2>/dev/null)" ]
}

upgrade_moves() {
	local policies xa ya gen hook
	local -A old new
	local -A prog_of=([pol_from]=velo_pol_from [pol_to]=velo_pol_to [pol_deliver]=velo_pol_uplink)
	POL_NO_SCTP=1
	pol_add x a '{}'
	pol_add y a '{}'
	xa="$(vt_host_ifname vt ctr-x-a eth0)"
	ya="$(vt_host_ifname vt ctr-y-a eth0)"
	pol_velod
	policies="[$(pol_np x isolate "$ISOLATE_XA")]"
	pol_check before "$policies"

	gen="$(cd "$VTC_BPFFS" && echo progs_g*)"
	[ -d "$VTC_BPFFS/$gen" ] || { echo "no generation dir: $(ls "$VTC_BPFFS")"; false; }
	for hook in pol_from pol_to pol_deliver; do
		old[$hook]="$(vt_gen_prog "$VTC_BPFFS" "$gen" "${prog_of[$hook]}")"
		[ -n "${old[$hook]}" ]
	done
	[ "$(link_prog "$xa" pol_from)" = "${old[pol_from]}" ]
	[ "$(link_prog "$xa" pol_to)" = "${old[pol_to]}" ]
	[ "$(link_prog "$ya" pol_deliver)" = "${old[pol_deliver]}" ]
	if [ -n "${VELO_TC_CLSACT:-}" ]; then
		[ -z "$(link_prog "$ya" pol_from)" ]
	else
		[ ! -e "$VTC_BPFFS/links/${ya}_pol_from" ]
	fi

	# The release changes: this velod stops, the next one's upgrade pass runs.
	kill "$POL_VELOD_PID"
	wait "$POL_VELOD_PID" || true
	POL_VELOD_PID=
	vt_velod_once "$VT_NEXT_VELOD" "$VTC_BPFFS" "$VT/work/velod-once.log"
	grep -q "moved to BPF generation nextgen" "$VT/work/velod-once.log" ||
		{ cat "$VT/work/velod-once.log"; false; }
	for hook in pol_from pol_to pol_deliver; do
		new[$hook]="$(vt_gen_prog "$VTC_BPFFS" progs_gnextgen "${prog_of[$hook]}")"
		[ -n "${new[$hook]}" ]
		[ "${new[$hook]}" != "${old[$hook]}" ]
	done
	[ "$(link_prog "$xa" pol_from)" = "${new[pol_from]}" ] || { cat "$VT/work/velod-once.log"; false; }
	[ "$(link_prog "$xa" pol_to)" = "${new[pol_to]}" ]
	[ "$(link_prog "$ya" pol_deliver)" = "${new[pol_deliver]}" ]
	[ ! -e "$VTC_BPFFS/$gen" ] || { echo "old generation still pinned: $(ls "$VTC_BPFFS/$gen")"; false; }

	# The next release's velod keeps the policy: the same verdicts on the moved links.
	POL_VELOD="$VT_NEXT_VELOD"
	pol_velod
	pol_check after "$policies"
	[ "$(link_prog "$xa" pol_from)" = "${new[pol_from]}" ]
}

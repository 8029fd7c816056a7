#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The names of an attachment's record and lock: one per (container id, ifname), with a ':'
# between them (no container id and no ifname can hold one), and records of velos that wrote
# "<container>_<ifname>" still found by DEL, CHECK and GC, never mistaken for another's.

load ../lib/lib

setup() { vt_setup_velo; }

# check_and_del CONTAINER POD IFNAME CONFIG RESULT: CHECK, then DEL, of the last attachment
# left; nothing may be left after.
check_and_del() {
	vt_cni CHECK "$1" "$2" "$3" "$(vt_with_prev "$4" "$5")"
	vt_assert_ok || return 1
	vt_cni DEL "$1" "$2" "$3" "$4"
	vt_assert_ok || return 1
	vt_assert_nothing_left
}

# legacy CONTAINER IFNAME: renames the attachment's record to the name older velos gave it.
legacy() {
	local dir="$VT_STATE/$VT_NETWORK"
	[ -f "$dir/$1:$2.json" ] || { echo "no record $dir/$1:$2.json: $(vt_records)"; return 1; }
	mv "$dir/$1:$2.json" "$dir/${1}_$2.json"
}

@test "(ctr_x, eth0) and (ctr, x_eth0) are two attachments: two records, each DEL its own" {
	local conf pod1 pod2 result1
	conf="$(vt_config -v 1.1.0 -f 4)"
	pod1="$(vt_pod_new)"
	pod2="$(vt_pod_new)"
	vt_add "$pod1" ctr_x "$conf" eth0
	result1="$VT_RESULT"
	vt_add "$pod2" ctr "$conf" x_eth0
	[ "$(vt_records)" = "$(printf '%s\n' "$VT_NETWORK/ctr:x_eth0.json" "$VT_NETWORK/ctr_x:eth0.json")" ] ||
		{ echo "records: $(vt_records)"; false; }
	vt_cni DEL ctr "$pod2" x_eth0 "$conf"
	vt_assert_ok
	[ "$(vt_records)" = "$VT_NETWORK/ctr_x:eth0.json" ] || { echo "records: $(vt_records)"; false; }
	check_and_del ctr_x "$pod1" eth0 "$conf" "$result1"
}

@test "a record named the old way (<container>_<ifname>) is found by CHECK and DEL" {
	local conf pod
	conf="$(vt_config -v 1.1.0 -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-old "$conf"
	legacy ctr-old eth0
	vt_cni CHECK ctr-old "$pod" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	# A second ADD of the same attachment still sees its record.
	vt_cni ADD ctr-old "$pod" eth0 "$conf"
	vt_assert_error 104 "already has eth0"
	vt_cni DEL ctr-old "$pod" eth0 "$conf"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "a record named the old way is released by GC" {
	local conf pod
	conf="$(vt_config -v 1.1.0 -f 4)"
	pod="$(vt_pod_new)"
	vt_add "$pod" ctr-gc "$conf"
	legacy ctr-gc eth0
	vt_gc "$conf" '[]'
	vt_assert_ok
	vt_assert_nothing_left
}

@test "an old-named record is only its own attachment's: DEL and ADD of (ctr, y_eth0) leave (ctr_y, eth0) alone" {
	local conf pod1 pod2 result1
	conf="$(vt_config -v 1.1.0 -f 4)"
	pod1="$(vt_pod_new)"
	pod2="$(vt_pod_new)"
	vt_add "$pod1" ctr_y "$conf" eth0
	result1="$VT_RESULT"
	legacy ctr_y eth0
	# ctr_y_eth0.json is (ctr_y, eth0)'s: not a record of (ctr, y_eth0), whose DEL finds none.
	vt_cni DEL ctr "$pod2" y_eth0 "$conf"
	vt_assert_ok
	[ "$(vt_records)" = "$VT_NETWORK/ctr_y_eth0.json" ] || { echo "records: $(vt_records)"; false; }
	vt_add "$pod2" ctr "$conf" y_eth0
	vt_cni DEL ctr "$pod2" y_eth0 "$conf"
	vt_assert_ok
	[ "$(vt_records)" = "$VT_NETWORK/ctr_y_eth0.json" ] || { echo "records: $(vt_records)"; false; }
	check_and_del ctr_y "$pod1" eth0 "$conf" "$result1"
}

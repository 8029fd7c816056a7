#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layout rule (docs/design.md, "Layout"), checked from the code's own includes and
# definitions; `make lint` runs it. Prints each break and exits 1 if there is any.
#  1. plugin/<folder>/ includes only its own folder or folders of a lower rank; includes of
#     another plugin folder name it ("state/state.h"); main.c may include any folder.
#  2. bpf/ includes nothing of plugin/; veloctl/ and velod/ include only the library and
#     their own files, never each other's. velod/<folder>/ keeps plugin's rank rule with its
#     own ranks: it includes its own folder's files by name ("part.h"), other velod folders
#     of a lower rank by folder ("k8s/k8s_nodes.h"); velod/*.c (main.c, the part table) may
#     include any folder. A velod header never shares its folder/name with the library's.
#  3. A header belongs to the .c of the same name and declares only functions and objects
#     that file defines; a header without a .c declares types and constants only. A .c file
#     declares no extern of another file (it includes that file's header instead).
#  4. Every C file of plugin/, veloctl/ and velod/ lies where the Makefile builds it (no
#     deeper folder than velod/<folder>/), opens with a comment after its SPDX line, and
#     lists its "..." includes grouped by folder (each run sorted: the library's folders,
#     then the tool's own files, then generated headers); a header's guard is
#     VELO_<FOLDER>_<NAME>_H (VELOCTL_<NAME>_H, VELOD_<FOLDER>_<NAME>_H in the tools).
#  5. No velod .c file is over VELOD_MAX_LINES lines (small files, one concern each), but those
#     listed in velod_long, each while it is being split; a listed file that is no longer over
#     the limit fails too, so the list only shrinks.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# Lower ranks first. Folders of one rank are independent of each other.
declare -A rank=([base]=0 [state]=1 [net]=1 [k8s]=1 [policy]=1 [cni]=2 [ipam]=3 [datapath]=3 [cgroup]=4 [features]=5
	[upgrade]=5 [cmd]=6)
# velod's folders, the same way: the agent's core, then the Kubernetes watches and the node,
# then what the datapath needs, then flow events, which name pods and Services.
declare -A velod_rank=([agent]=0 [k8s]=1 [node]=1 [routing]=2 [services]=2 [policy]=2 [flows]=3)
VELOD_MAX_LINES=400
# velod files allowed over VELOD_MAX_LINES for now, each with the note "being split" (issue 39);
# empty since velod/policy/policy.c's split (606 to 366 lines).
declare -A velod_long=(
)
broken=0

fail() {
	printf 'layout: %s\n' "$*"
	broken=1
}

# quoted_includes FILE: the "..." includes of FILE, one a line.
quoted_includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

is_generated() {
	case $1 in *.skel.h | velo_bpf_gen.h) return 0 ;; esac
	return 1
}

# checked_includes FILE: its "..." includes the rules judge (not generated headers, not
# bpf/lib/, which every C file may include), one a line.
checked_includes() {
	local inc
	while read -r inc; do
		[ -n "$inc" ] || continue
		is_generated "$inc" && continue
		case $inc in bpf/lib/*) continue ;; esac
		printf '%s\n' "$inc"
	done < <(quoted_includes "$1")
}

# folder_of FILE ROOT: the folder of ROOT/<folder>/FILE; "" for a file of ROOT itself.
folder_of() {
	case $1 in
	"$2"/*/*) local own=${1#"$2"/} && printf '%s' "${own%%/*}" ;;
	esac
}

# is_library INC: a file of one of the library's ranked folders.
is_library() {
	[ -n "${rank[${1%%/*}]+x}" ] && [ -f "plugin/$1" ]
}

for folder in plugin/*/; do
	folder=${folder%/}
	name=${folder#plugin/}
	[ -n "${rank[$name]+x}" ] || fail "$folder has no rank in hack/check-layout.sh"
done
for folder in velod/*/; do
	folder=${folder%/}
	name=${folder#velod/}
	[ -n "${velod_rank[$name]+x}" ] || fail "$folder has no rank in hack/check-layout.sh"
done

for file in plugin/*/*.[ch] plugin/*.c; do
	own=$(folder_of "$file" plugin)
	while read -r inc; do
		case $inc in
		*/*) ;;
		*)
			fail "$file: #include \"$inc\" must name its folder"
			continue
			;;
		esac
		target=${inc%%/*}
		if ! is_library "$inc"; then
			fail "$file: #include \"$inc\" is not a file of plugin/"
			continue
		fi
		[ -z "$own" ] && continue
		[ "$target" = "$own" ] && continue
		if [ "${rank[$target]}" -ge "${rank[$own]}" ]; then
			fail "$file: $own (rank ${rank[$own]}) includes $inc (rank ${rank[$target]}): includes only go down"
		fi
	done < <(checked_includes "$file")
done

for file in bpf/*.c bpf/lib/*.h; do
	while read -r inc; do
		case $inc in
		*/*.h) [ -f "plugin/$inc" ] && fail "$file: bpf/ includes plugin/$inc" ;;
		esac
		case $inc in *plugin/*) fail "$file: bpf/ includes $inc" ;; esac
	done < <(quoted_includes "$file")
done

for file in veloctl/*.[ch]; do
	while read -r inc; do
		case $inc in
		*/*) is_library "$inc" || fail "$file: #include \"$inc\" is neither the library nor veloctl/" ;;
		*) [ -f "veloctl/$inc" ] || fail "$file: #include \"$inc\" is not a file of veloctl/" ;;
		esac
	done < <(checked_includes "$file")
done

# velod/<folder>/: its own folder's files by name, a lower velod folder's or the library's by
# folder; velod/*.c (main.c, the part table) any velod folder.
for file in velod/*.[ch] velod/*/*.[ch]; do
	own=$(folder_of "$file" velod)
	while read -r inc; do
		case $inc in
		*/*) ;;
		*)
			[ -f "${file%/*}/$inc" ] || fail "$file: #include \"$inc\" is not a file of ${file%/*}/"
			continue
			;;
		esac
		target=${inc%%/*}
		if [ -f "velod/$inc" ] && [ -f "plugin/$inc" ]; then
			fail "$file: #include \"$inc\" names both velod/$inc and plugin/$inc"
		elif [ -f "velod/$inc" ]; then
			[ -z "$own" ] && continue
			if [ "$target" = "$own" ]; then
				fail "$file: #include \"$inc\" names its own folder (\"${inc#*/}\")"
			elif [ -n "${velod_rank[$target]+x}" ] && [ -n "${velod_rank[$own]+x}" ] &&
				[ "${velod_rank[$target]}" -ge "${velod_rank[$own]}" ]; then
				fail "$file: $own (rank ${velod_rank[$own]}) includes $inc (rank ${velod_rank[$target]}): includes only go down"
			fi
		elif ! is_library "$inc"; then
			fail "$file: #include \"$inc\" is neither the library nor velod/"
		fi
	done < <(checked_includes "$file")
done

# A velod .c file over the limit, unless it is being split; a listed one back under it.
for file in velod/*.c velod/*/*.c; do
	lines=$(wc -l <"$file")
	if [ -n "${velod_long[$file]+x}" ]; then
		[ "$lines" -gt "$VELOD_MAX_LINES" ] ||
			fail "$file: $lines lines, no longer over $VELOD_MAX_LINES: drop it from velod_long"
	elif [ "$lines" -gt "$VELOD_MAX_LINES" ]; then
		fail "$file: $lines lines, over velod's $VELOD_MAX_LINES: split it by concern"
	fi
done
for file in "${!velod_long[@]}"; do
	[ -f "$file" ] || fail "$file is in velod_long but does not exist: drop it"
done

# Every symbol once, from one ctags run (a run per file costs minutes on a loaded machine):
# "FILE KIND NAME" lines, kinds p(rototype), x (extern variable), f(unction), v(ariable).
# ctags reads a file-scope _Static_assert(offsetof(...) ...) as a prototype of offsetof: no
# file of velo's declares that macro, so it is never a symbol.
tags=$(ctags -x --language-force=C --c-kinds=pxfv plugin/*/*.[ch] plugin/*.c veloctl/*.[ch] \
	velod/*.[ch] velod/*/*.[ch] 2>/dev/null | awk '$1 != "offsetof" {
		k = substr($2, 1, 1); if ($2 == "externvar") k = "x"; print $4, k, $1 }')

# What each header declares that its .c doesn't define ("HEADER NAME..." lines; "HEADER -"
# when it has no .c); one awk over the tags.
headers=$(printf '%s\n' plugin/*/*.h veloctl/*.h velod/*.h velod/*/*.h)
while read -r header names; do
	source=${header%.h}.c
	if [ ! -f "$source" ]; then
		fail "$header has no ${source##*/} but declares$names"
		continue
	fi
	missing=
	for name in $names; do
		# ctags misses some definitions (an array of enum type): a line at column 0 that
		# defines the name counts too.
		grep -Eq "^[A-Za-z_][^;]*[^A-Za-z0-9_]${name}[[:space:]]*(\(|\[|=)" "$source" ||
			missing="$missing $name"
	done
	[ -z "$missing" ] || fail "$header declares what ${source##*/} does not define:$missing"
done < <(awk -v headers="$headers" '
	BEGIN { n = split(headers, list, "\n"); for (i = 1; i <= n; i++) wanted[list[i]] = 1 }
	($2 == "p" || $2 == "x") && ($1 in wanted) { declared[$1, $3] = 1; files[$1] = 1 }
	$2 == "f" || $2 == "v" { defined[$1, $3] = 1 }
	END {
		for (key in declared) {
			split(key, part, SUBSEP)
			source = part[1]; sub(/\.h$/, ".c", source)
			if (!((source, part[2]) in defined))
				out[part[1]] = out[part[1]] " " part[2]
		}
		for (h in out) print h out[h]
	}' <<<"$tags" | sort)

# A .c file declaring a prototype or an extern: another file's, which it should include.
while read -r source names; do
	fail "$source declares another file's $names"
done < <(awk '$1 ~ /\.c$/ && ($2 == "p" || $2 == "x") { seen[$1] = seen[$1] " " $3 }
	END { for (f in seen) print f seen[f] }' <<<"$tags" | sort)

# The Makefile builds plugin/<folder>/*.c, plugin/main.c, veloctl/*.c, velod/*.c and
# velod/<folder>/*.c only.
while read -r file; do
	fail "$file: in a nested folder, which the Makefile does not build"
done < <(find plugin velod -mindepth 3 -name '*.[ch]' | sort; find veloctl -mindepth 2 -name '*.[ch]' | sort)

# One awk over every file: the opening comment (line 2), each run of "..." includes (a block
# of consecutive include lines) in order, library folders (0) before the tool's own files (1)
# before generated headers (2), and a header's guard.
while read -r line; do
	fail "$line"
done < <(LC_ALL=C awk -v velod_headers="$(cd velod && printf '%s\n' */*.h)" '
	BEGIN {
		n = split(velod_headers, list, "\n")
		for (i = 1; i <= n; i++)
			velod_header[list[i]] = 1
	}
	function finish() {
		if (file ~ /\.h$/ && !guarded)
			print file ": include guard is not " guard
	}
	FNR == 1 {
		if (NR > 1)
			finish()
		file = FILENAME
		guarded = 0
		inrun = 0
		disordered = 0
		n = split(file, part, "/")
		name = part[n]
		sub(/\.h$/, "", name)
		guard = (part[1] == "plugin" ? "VELO_" part[2] "_" : part[1] "_" (n == 3 ? part[2] "_" : "")) name "_H"
		guard = toupper(guard)
	}
	FNR == 2 && $0 !~ /^\/\*/ {
		print file ": no opening comment (line 2) saying what the file is for"
	}
	$1 == "#ifndef" && $2 == guard {
		guarded = 1
	}
	/^[[:space:]]*#[[:space:]]*include[[:space:]]*"/ {
		inc = $0
		sub(/^[^"]*"/, "", inc)
		sub(/".*$/, "", inc)
		key = (inc ~ /\.skel\.h$|^velo_bpf_gen\.h$/ ? 2 : (inc ~ /\// && !(file ~ /^velod\// && inc in velod_header) ? 0 : 1)) inc
		if (inrun && key < last && !disordered) {
			print file ": \"...\" includes not grouped by folder (sort each run)"
			disordered = 1
		}
		last = key
		inrun = 1
		next
	}
	{ inrun = 0 }
	END { finish() }
' plugin/*.c plugin/*/*.[ch] veloctl/*.[ch] velod/*.[ch] velod/*/*.[ch])

if [ "$broken" -ne 0 ]; then
	exit 1
fi
printf 'layout: ranks, headers and includes hold\n'

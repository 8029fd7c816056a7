#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Finds `a && b` lists in the middle of a bats @test body. Bats runs tests under `set -e`, which
# ignores a failure of any command in an && list but the last: `[ "$x" -gt 0 ] && [ "$y" -gt 0 ]`
# followed by more commands passes when x is 0. Prints file:line for each and exits 1.
#
# Not flagged: && inside $( ), [[ ]], quotes or an if/while/until condition; lists ending in
# break, continue, return or exit (control flow); lists ending in a { ...; false; } block
# (a negative assertion) or followed by such a `||` fallback; a test's last command.
#
# Usage: hack/check-bats.sh [file.bats|dir ...]   (default: the repo's tests/)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -gt 0 ] || set -- "$repo/tests"
mapfile -t files < <(find "$@" -name '*.bats' -type f | sort)
[ ${#files[@]} -gt 0 ] || {
	echo "check-bats: no .bats files under $*" >&2
	exit 2
}

# awk: per file, collect each @test body, reduce it to its top-level shell text (quotes,
# $( ), ${ }, [[ ]] and heredocs blanked), fold { } groups, split into commands, check each.
awk '
function flush_body(   n, i, c, nx, oline, st, sp, ch, hd, seg, segs, segl, k, t, last) {
	# Scanner over the body text; st[] is a stack of contexts:
	# S single quote, D double quote, C $( or ( inside $( ), E ${ }, B [[ ]].
	n = length(body); out = ""; sp = 0; oline = bline_start; delete lmap
	olen = 0
	for (i = 1; i <= n; i++) {
		c = substr(body, i, 1); nx = substr(body, i + 1, 1)
		if (c == "\n") oline++
		top = (sp == 0)
		ctx = sp ? st[sp] : ""
		if (ctx == "S") { if (c == "\047") sp--; continue }
		if (c == "\\" ) { i++; if (nx == "\n") oline++; continue }
		if (ctx == "D") {
			if (c == "\"") sp--
			else if (c == "$" && nx == "(") { st[++sp] = "C"; i++ }
			else if (c == "$" && nx == "{") { st[++sp] = "E"; i++ }
			continue
		}
		if (c == "\047") { st[++sp] = "S"; if (top) emit("x", oline); continue }
		if (c == "\"") { st[++sp] = "D"; if (top) emit("x", oline); continue }
		if (c == "$" && nx == "(") { st[++sp] = "C"; i++; if (top) emit("x", oline); continue }
		if (c == "$" && nx == "{") { st[++sp] = "E"; i++; if (top) emit("x", oline); continue }
		if (ctx == "C") {
			if (c == "(") st[++sp] = "C"
			else if (c == ")") sp--
			continue
		}
		if (ctx == "E") { if (c == "}") sp--; continue }
		if (ctx == "B") { if (c == "]" && nx == "]") { sp--; i++ }; continue }
		# top level
		if (c == "[" && nx == "[") { st[++sp] = "B"; i++; emit("x", oline); continue }
		if (c == "#" && (olen == 0 || substr(out, olen, 1) ~ /[ \t\n;]/)) {
			while (i <= n && substr(body, i + 1, 1) != "\n") i++
			continue
		}
		emit(c, oline)
	}
	# Fold innermost { } groups: one whose last command is a failure is FAILBLK.
	while (match(out, /\{[^{}]*\}/)) {
		grp = substr(out, RSTART + 1, RLENGTH - 2)
		gsub(/[ \t\n;]+$/, "", grp)
		rep = (grp ~ /(^|[ \t\n;])(false|return [1-9][0-9]*|exit [1-9][0-9]*|fail( .*)?)$/) ? \
		      "FAILBLK" : "BLK"
		pad = ""
		for (k = length(rep); k < RLENGTH; k++) pad = pad " "
		# keep newlines so offsets still map to lines
		inner = substr(out, RSTART, RLENGTH); nl = inner; gsub(/[^\n]/, "", nl)
		out = substr(out, 1, RSTART - 1) rep substr(pad, 1, length(pad) - length(nl)) nl \
		      substr(out, RSTART + RLENGTH)
	}
	# Split into commands: ; & newline (unless the line continues with && || |) and keywords.
	segs = 0; seg = ""; segl = 0
	n = length(out)
	for (i = 1; i <= n; i++) {
		c = substr(out, i, 1)
		if (seg == "" && c ~ /[ \t\n]/) continue
		if (seg == "") segl = lmap[i]
		if (c == ";" || (c == "&" && substr(out, i + 1, 1) != "&" && substr(out, i - 1, 1) != "&" && \
		    substr(out, i - 1, 1) != ">" && substr(out, i + 1, 1) != ">")) {
			add_seg(seg, segl); seg = ""; continue
		}
		if (c == "\n") {
			t = seg; sub(/[ \t]+$/, "", t)
			if (t ~ /(&&|\|\||\|)$/) { seg = seg " "; continue }
			add_seg(seg, segl); seg = ""; continue
		}
		seg = seg c
		if (substr(out, i + 1, 1) ~ /^([ \t\n;]|)$/ && match(seg, /(^|[ \t])(then|do|else)$/)) {
			nseg = substr(seg, 1, RSTART - 1)
			add_seg(nseg, segl); seg = ""
		}
	}
	add_seg(seg, segl)
	for (k = 1; k <= nsegs; k++) {
		if (k == nsegs) break
		if (bad(sg[k])) printf "%s:%d: && list mid-test: only its last command is checked\n", \
			FILENAME, sl[k]
		if (bad(sg[k])) found = 1
	}
	nsegs = 0; delete sg; delete sl
}
function emit(c, l) { out = out c; olen++; lmap[olen] = l }
function add_seg(s, l) {
	gsub(/^[ \t\n]+|[ \t\n]+$/, "", s)
	if (s == "" || s ~ /^(fi|done|esac|BLK|FAILBLK|\})$/) return
	sg[++nsegs] = s; sl[nsegs] = l
}
function bad(s,   tail, p) {
	if (s !~ /&&/) return 0
	if (s ~ /^(if|elif|while|until|!)[ \t]/) return 0
	# a || fallback that fails keeps the list honest
	if (match(s, /\|\|[^|]*$/)) {
		tail = substr(s, RSTART + 2); gsub(/^[ \t]+|[ \t]+$/, "", tail)
		if (tail ~ /^(FAILBLK|false|return [1-9][0-9]*|exit [1-9][0-9]*|fail( .*)?)$/) return 0
		return 1
	}
	p = s; sub(/.*&&[ \t]*/, "", p)
	if (p ~ /^(break|continue|return|exit|FAILBLK)([ \t]|$)/) return 0
	return 1
}
FNR == 1 { intest = 0; heredoc = "" }
{
	line = $0
	if (heredoc != "") {
		t = line; if (hdstrip) sub(/^\t+/, "", t)
		if (t == heredoc) heredoc = ""
		if (intest) body = body "\n"
		next
	}
	if (!intest && line ~ /^@test /) {
		intest = 1; body = ""; bline_start = FNR + 1; first = 1
		next
	}
	if (intest && line ~ /^\}[ \t]*$/) { flush_body(); intest = 0; next }
	if (intest) {
		body = first ? line : body "\n" line; first = 0
		# a heredoc opener: skip its text
		if (match(line, /<<-?[ \t]*[\047"]?[A-Za-z_][A-Za-z0-9_]*[\047"]?/) && \
		    substr(line, RSTART - 1, 1) != "<") {
			tok = substr(line, RSTART, RLENGTH)
			hdstrip = (tok ~ /^<<-/)
			sub(/^<<-?[ \t]*/, "", tok); gsub(/[\047"]/, "", tok)
			heredoc = tok
		}
	}
}
END { exit found ? 1 : 0 }
' "${files[@]}"
echo "check-bats: no && list mid-test in ${#files[@]} files"

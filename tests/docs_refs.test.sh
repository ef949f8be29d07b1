#!/bin/sh
# The documents point at what exists: every file or folder of the tree that README.md and
# docs/*.md name in backquotes (emu/..., nn/..., tests/..., a test program by its
# source's name) is there, every link to a local file leads to one, and every #anchor of
# a link to a page is a heading of that page (GitHub's slugs).  So a checklist in
# docs/extending.md that names a file a change renamed fails here.
# env: SRCDIR
. "$SRCDIR/tests/lib.sh"
cd "$SRCDIR"
for f in README.md docs/*.md; do
	dir=$(dirname "$f")
	grep -o '`\(emu\|nn\|tests\|scripts\|ini\|plots\|examples\|docs\|man\|completion\)/[A-Za-z0-9_./-]*`' "$f" |
		tr -d '`' | sort -u | while read -r p; do
		case "$p" in *NAME*) continue ;; esac
		[ -e "$p" ] || [ -e "$p.c" ] || echo "$f names $p, which is not in the tree"
	done
	grep -o '](\([A-Za-z0-9_./-]*\)\(#[A-Za-z0-9_-]*\)\?)' "$f" | sed 's/^](//; s/)$//' | sort -u |
		while read -r l; do
		target=${l%%#*} anchor=
		case "$l" in *"#"*) anchor=${l#*#} ;; esac
		[ -n "$target" ] && target="$dir/$target" || target=$f
		[ -e "$target" ] || { echo "$f links to $l, which is not in the tree"; continue; }
		case "$target" in *.md) [ -n "$anchor" ] || continue ;; *) continue ;; esac
		grep '^#' "$target" | sed 's/^#* *//' | tr 'A-Z' 'a-z' |
			sed 's/[^a-z0-9 _-]//g; s/ /-/g' | grep -qx -- "$anchor" ||
			echo "$f links to $l: $target has no such heading"
	done
done >"$T/bad"
[ ! -s "$T/bad" ] || fail "$(cat "$T/bad")"
echo "$(ls README.md docs/*.md | wc -l) pages: every path, link and anchor found"

#!/bin/bash
# The product's text describes the product as it is, not how it came to be: README.md,
# docs/*.md, the man page, the Makefile, .ci/run and every text file of emu/, nn/,
# tests/, scripts/, plots/, ini/ and completion/ (comments, messages, test names; CSV
# data aside) name no commit hash, development session, issue number or issue-tracker
# reference, date of development, and do not narrate ("until today", "an earlier
# version", "previously", "tried and not kept", "this VM").  tests/history.allow lists
# the few words that mean something else where they stand.  Each offending line is
# printed as FILE:LINE: text.  The checker is run on the tree and on a copy of a page with
# history planted in it, so that it is known to refuse what it should.
# This script and tests/history.allow name what they look for, so they are not checked.
# env: SRCDIR (the repository); HISTORY_SKIP_DOCS=1 leaves README.md and docs/ out.
. "${SRCDIR:?run through tests/run.sh}/tests/lib.sh"
cd "$SRCDIR"
allow=$SRCDIR/tests/history.allow	# (the planted page is checked from elsewhere)
[ -r "$allow" ] || fail "$allow: cannot read it"

# check_history UNUSED FILE...: prints each line of the FILEs that tells development
# history as FILE:LINE: text, and in UNUSED each entry of $allow that matched nothing;
# status 1 when a line was printed, 2 when $allow is malformed.
check_history() {
	unused=$1
	shift
	perl -e '
	use strict; use warnings;
	my ($allowf, $unused) = splice(@ARGV, 0, 2);
	my @allow;	# [path regex, text regex, the entry, its line, times it matched]
	open(my $a, "<", $allowf) or die "$allowf: $!\n";
	while (<$a>) {
		chomp;
		next if /^\s*(#|$)/;
		my ($p, $r) = /^([^:]+):(.+)$/ or do {
			print STDERR "$allowf:$.: expected PATH:REGEX, not \"$_\"\n"; exit 2 };
		my $re = eval { qr/$r/ } or do {
			print STDERR "$allowf:$.: $r is no regular expression: $@"; exit 2 };
		(my $g = quotemeta $p) =~ s/\\\*/.*/g;
		push @allow, [qr/^$g$/, $re, $_, $., 0];
	}
	my @bad = (
		# a commit hash: 7 to 40 hex digits, letters and digits both, a word of its
		# own; not a constant (0x..), not a number with an exponent (86400e9, 1.5e3)
		qr/(?<![\w.+\-])(?![0-9]+e[0-9]*(?!\w))(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?!\w)/,
		qr/\bsessions?\b/i,
		qr/\bissues?\s+#?[0-9]+/i,
		qr/(?<![\w&\$#])#[0-9]{1,5}(?![\w])/,	# an issue tracker (#606060 is a colour)
		qr/\buntil\s+(today|now|20[0-9][0-9]-)/i,
		qr/\ban?\s+earlier\s+(version|readme|session)/i,
		qr/\btried\s+and\s+not\s+kept\b/i,
		qr/\bpreviously\b/i,
		qr/\bthis\s+VM\b/i,
		qr/\bthe\s+brief\b/i,
		qr/\b20[0-9][0-9]-(0[1-9]|1[0-2])\b/,	# a date of development
	);
	my $hits = 0;
	for my $f (@ARGV) {
		next if -B $f;
		open(my $in, "<", $f) or die "$f: $!\n";
		my @mine = grep { $f =~ $_->[0] } @allow;
		while (my $line = <$in>) {
			chomp $line;
			my $t = $line;
			for my $e (@mine) {
				$e->[4]++ if $t =~ s/$e->[1]/ /g;
			}
			next unless grep { $t =~ $_ } @bad;
			print "$f:$.: $line\n";
			$hits++;
		}
	}
	open(my $u, ">", $unused) or die "$unused: $!\n";
	print $u "$allowf:$_->[3]: $_->[2]\n" for grep { !$_->[4] } @allow;
	exit($hits ? 1 : 0);
	' "$allow" "$unused" "$@"
}

# The product's text files, tracked or new (not ignored).
docs="README.md docs/*.md"
[ "${HISTORY_SKIP_DOCS:-}" = 1 ] && docs=
files=$(git ls-files --cached --others --exclude-standard $docs man/emu.1 Makefile .ci/run \
	emu nn tests scripts plots ini completion 2>/dev/null ||
	find $docs man/emu.1 Makefile .ci/run emu nn tests scripts plots ini completion -type f \
		2>/dev/null || true)
files=$(printf '%s\n' $files | grep -v -e '\.csv$' -e '^tests/history\.test\.sh$' \
	-e '^tests/history\.allow$' | sort -u)
[ "$(printf '%s\n' $files | wc -l)" -gt 100 ] || fail "only $(printf '%s\n' $files | wc -l) files found to check"
if [ -n "$docs" ]; then
	[ -e README.md ] || fail "README.md is missing"
else
	echo "SKIP: README.md and docs/*.md (HISTORY_SKIP_DOCS=1)"
fi

rc=0
check_history "$T/unused" $files >"$T/hits" || rc=$?
[ $rc -le 1 ] || fail "$allow is malformed (above)"
[ $rc -eq 0 ] || fail "development history in the product's text (tell what the product does,
not how it came to be; $allow lists words that mean something else):
$(cat "$T/hits")"
# an entry for the pages left out may match nothing while they are left out
if [ -s "$T/unused" ] && [ -n "$docs" ]; then
	fail "an entry of $allow that matches nothing (remove it):
$(cat "$T/unused")"
fi

# The checker bites: a page with history planted in it, each kind once, and one line of
# words it must let through; exactly the planted lines must be refused.
mkdir -p "$T/tree/docs"
page=README.md
[ -e "$page" ] || page=$(printf '%s\n' $files | grep '\.md$' | head -n 1)
[ -n "$page" ] || fail "no page to plant history in"
cp "$page" "$T/tree/docs/planted.md"
n=$(wc -l <"$T/tree/docs/planted.md")
cat >>"$T/tree/docs/planted.md" <<'EOF'
The ring was fixed at commit 3cc3ae3.
Measured in the second session, on this VM.
See issue 17 for the goals.
The same as #42 in the tracker.
Until 2026-11-27 the ring copied every block.
Tried and not kept: a bigger block.
The exchange previously sent one message a peer.
An earlier README said otherwise.
Checks 0x1edc6f41 and 86400e9 and 1.44269504e-4 and 3.3e+07 in a dropped ssh session.
EOF
cd "$T/tree"
rc=0
check_history "$T/unused2" docs/planted.md >"$T/refused" || rc=$?
cd "$SRCDIR"
[ $rc -eq 1 ] || fail "the checker on the planted page: status $rc, expected 1"
for i in 1 2 3 4 5 6 7 8; do
	grep -q "^docs/planted.md:$((n + i)): " "$T/refused" ||
		fail "the checker let planted history through: $(sed -n "$((n + i))p" "$T/tree/docs/planted.md")"
done
# (the page's own lines are the tree check's business above)
awk -F: -v n="$n" '$2 > n' "$T/refused" >"$T/refused_planted"
[ "$(wc -l <"$T/refused_planted")" -eq 8 ] || fail "the checker refused more than the planted lines:
$(cat "$T/refused_planted")"
echo "$(printf '%s\n' $files | wc -l) files without development history (8 planted lines refused)"

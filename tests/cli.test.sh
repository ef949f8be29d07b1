#!/bin/sh
# The emu command line: help, version, exit codes, the exact message for every bad
# input in tests/bad (NAME.ini -> NAME.expect; overrides.txt), the round trip of
# `emu check` on every ini/*.ini, and README's key reference against the binary.
# env: EMU (the binary), SRCDIR (the repository)
EMU=${EMU:-build/emu}
SRCDIR=${SRCDIR:-.}
cd "$SRCDIR" || exit 1
if [ ! -x "$EMU" ] || [ -d "$EMU" ]; then
	echo "no emu binary at $EMU"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
nok=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_rc RC DESCRIPTION CMD...: runs CMD, stdout/stderr into $tmp/out $tmp/err
expect_rc() {
	rc_want=$1 rc_what=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$rc_want" ] ||
		fail "$rc_what: exit $rc, expected $rc_want; stderr: $(head -c 300 "$tmp/err")"
	nok=$((nok + 1))
}

# --- help, version, usage errors -----------------------------------------------------
expect_rc 0 "--version" "$EMU" --version
[ "$(cat "$tmp/out")" = "emu $(cat VERSION)" ] || fail "--version printed '$(cat "$tmp/out")'"
for h in --help -h help; do
	expect_rc 0 "emu $h" "$EMU" $h
	grep -q '^usage: emu COMMAND' "$tmp/out" || fail "emu $h: no usage on stdout"
done
for topic in run check bench keys net link train jointspar; do
	expect_rc 0 "emu help $topic" "$EMU" help $topic
	[ -s "$tmp/out" ] || fail "emu help $topic printed nothing"
done
expect_rc 2 "emu help bogus" "$EMU" help bogus
grep -q "unknown topic 'bogus'" "$tmp/err" || fail "emu help bogus: $(cat "$tmp/err")"
expect_rc 2 "emu (no command)" "$EMU"
grep -q '^usage:' "$tmp/err" || fail "emu without arguments: no usage on stderr"
expect_rc 2 "unknown command" "$EMU" frobnicate
[ "$(cat "$tmp/err")" = "emu: unknown command 'frobnicate'; expected run, check, bench or help (emu --help)" ] ||
	fail "unknown command: $(cat "$tmp/err")"
expect_rc 2 "near command" "$EMU" chek x.ini
[ "$(cat "$tmp/err")" = "emu: unknown command 'chek'; did you mean 'check'?" ] || fail "chek: $(cat "$tmp/err")"
expect_rc 2 "check without file" "$EMU" check
expect_rc 2 "run without file" "$EMU" run
expect_rc 2 "bench without name" "$EMU" bench
expect_rc 2 "missing file" "$EMU" check "$tmp/nonexistent.ini"
[ "$(cat "$tmp/err")" = "$tmp/nonexistent.ini: cannot open: No such file or directory" ] ||
	fail "missing file: $(cat "$tmp/err")"
expect_rc 2 "directory" "$EMU" check "$tmp"
[ "$(cat "$tmp/err")" = "$tmp: cannot read: Is a directory" ] || fail "directory: $(cat "$tmp/err")"

# --- input that never ends: refused at once, in bounded memory ---------------------
# (a hang here is caught by `timeout`; ulimit -v keeps a reader that slurps from passing,
# except in the sanitizer build, whose shadow memory cannot live under it)
if (ulimit -v 262144 && "$EMU" --version) >/dev/null 2>&1; then
	bounded() { (ulimit -v 262144 && timeout 10 "$@"); }
else
	bounded() { timeout 10 "$@"; }
fi
expect_rc 2 "/dev/zero" bounded "$EMU" check /dev/zero
[ "$(cat "$tmp/err")" = "/dev/zero:1: NUL byte in line; expected text" ] ||
	fail "/dev/zero: $(cat "$tmp/err")"
mkfifo "$tmp/fifo"
expect_rc 2 "FIFO" bounded "$EMU" run "$tmp/fifo"
[ "$(cat "$tmp/err")" = "$tmp/fifo: cannot read: a FIFO, not a file" ] || fail "FIFO: $(cat "$tmp/err")"
# one line of 16 MB, then 2 MB of comments: both stop at their cap
head -c 16777216 /dev/zero | tr '\0' a >"$tmp/line.ini"
expect_rc 2 "huge line" bounded "$EMU" check "$tmp/line.ini"
[ "$(cat "$tmp/err")" = "$tmp/line.ini:1: line is over 4096 characters long; expected at most 197 (inih's line limit)" ] ||
	fail "huge line: $(cat "$tmp/err")"
yes '# comment' | head -n 200000 >"$tmp/long.ini"
expect_rc 2 "huge file" bounded "$EMU" check "$tmp/long.ini"
grep -q "^$tmp/long.ini:104858: the file goes on past 1024 KiB" "$tmp/err" || fail "huge file: $(cat "$tmp/err")"

# every key of the table is in the reference
expect_rc 0 "help keys --markdown" "$EMU" help keys --markdown
nkeys=$(grep -c '^| [a-z]* | `' "$tmp/out")
"$EMU" check /dev/null | grep -c '^[a-z0-9_]* = ' >"$tmp/n"
[ "$nkeys" -eq "$(cat "$tmp/n")" ] || fail "help keys lists $nkeys keys, check prints $(cat "$tmp/n")"
[ "$nkeys" -gt 50 ] || fail "help keys lists only $nkeys keys"

# --- bad input: one exact message, exit 2, nothing run ----------------------------
nbad=0
for ini in tests/bad/*.ini; do
	want="${ini%.ini}.expect"
	[ -f "$want" ] || { fail "$ini has no $want"; continue; }
	for cmd in check run; do
		expect_rc 2 "emu $cmd $ini" "$EMU" $cmd "$ini" "run.output=$tmp/ran"
		[ "$(cat "$tmp/err")" = "$(cat "$want")" ] ||
			fail "emu $cmd $ini said:
  $(cat "$tmp/err")
expected:
  $(cat "$want")"
		[ -s "$tmp/out" ] && fail "emu $cmd $ini wrote to stdout"
	done
	nbad=$((nbad + 1))
done
[ -e "$tmp/ran" ] && fail "a bad configuration created its output directory"
tab=$(printf '\t')
while IFS= read -r line; do
	case "$line" in '#'* | '') continue ;; esac
	want=${line##*"$tab"}
	args=${line%"$tab"*}
	old_ifs=$IFS
	IFS=$tab
	# shellcheck disable=SC2086  # split the arguments at tabs, on purpose
	set -- $args
	IFS=$old_ifs
	expect_rc 2 "overrides $*" "$EMU" check /dev/null "$@"
	[ "$(cat "$tmp/err")" = "$want" ] || fail "emu check /dev/null $* said:
  $(cat "$tmp/err")
expected:
  $want"
	nbad=$((nbad + 1))
done <tests/bad/overrides.txt
[ "$nbad" -ge 30 ] || fail "only $nbad bad-input cases"

# --- good input: overrides apply, check round-trips ---------------------------------
expect_rc 0 "override" "$EMU" check /dev/null net.latency=5ms 'link 0-1.loss=bernoulli' run.workers=2
grep -qx 'latency = 5ms' "$tmp/out" || fail "net.latency=5ms not in emu check output"
grep -qx '\[link 0-1\]' "$tmp/out" || fail "link override not in emu check output"
for ini in ini/*.ini; do
	[ -f "$ini" ] || continue
	expect_rc 0 "check $ini" "$EMU" check "$ini"
	cp "$tmp/out" "$tmp/a.ini"
	expect_rc 0 "check of check $ini" "$EMU" check "$tmp/a.ini"
	cmp -s "$tmp/a.ini" "$tmp/out" || fail "emu check $ini does not round-trip: $(diff "$tmp/a.ini" "$tmp/out" | head -5)"
done

# --- README's reference is the binary's --------------------------------------------
if [ -f README.md ]; then
	sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' README.md | sed '1d;$d' >"$tmp/readme"
	"$EMU" help keys --markdown >"$tmp/md"
	cmp -s "$tmp/readme" "$tmp/md" ||
		fail "README.md's key reference differs from 'emu help keys --markdown' (regenerate it): $(diff "$tmp/readme" "$tmp/md" | head -4)"
fi

echo "$nok commands checked, $nbad bad inputs, $fails failures"
[ "$fails" -eq 0 ]

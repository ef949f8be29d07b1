#!/bin/sh
# emu installed like a tool: make install PREFIX=$T/x, then from another
# folder, with only PREFIX/bin on the way: `emu run quickstart.ini` finds the installed
# preset and says so (a file of that name in the current folder comes first; none at all
# names every place looked; the run lands in the current folder), `man emu` renders the
# page, the bash completion completes commands, presets, INI files, overrides and values,
# the installed plot scripts draw the run; make uninstall removes every file install put.
# DESTDIR stages the same tree.  env: EMU, SRCDIR, BUILD (tests/run.sh)
. "$SRCDIR/tests/lib.sh"
cd "$SRCDIR"
P=$(realpath "$T")/x
# (the suite may run under `make test`: its flags are not this make's business; BUILD
# names the emu the suite built, which install takes as it is)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
	BUILD="${BUILD:-build}" "$@" >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make $*"; }; }
mk install PREFIX="$P"
for f in bin/emu bin/emu-plots share/emu/ini/quickstart.ini share/emu/ini/example.ini \
	share/emu/plots/common.gp share/emu/plots/accuracy.gp share/man/man1/emu.1 \
	share/bash-completion/completions/emu; do
	[ -f "$P/$f" ] || fail "make install put no $P/$f"
done
[ -x "$P/bin/emu" ] && [ -x "$P/bin/emu-plots" ] || fail "bin/emu, bin/emu-plots not executable"
mk install DESTDIR="$T/stage" PREFIX=/opt/emu
[ -f "$T/stage/opt/emu/bin/emu" ] && [ -f "$T/stage/opt/emu/share/emu/ini/quickstart.ini" ] ||
	fail "make install DESTDIR=$T/stage PREFIX=/opt/emu: $(cd "$T/stage" && find . -type f | head -3)"

# --- the preset from another folder ----------------------------------------------------
W=$T/elsewhere
mkdir "$W"
cd "$W"
export PATH="$P/bin:$PATH" MANPAGER=cat PAGER=cat MANWIDTH=80
command -v emu | grep -qx "$P/bin/emu" || fail "emu on PATH is $(command -v emu)"
tiny="run.workers=2 train.max_steps=4 data.train_limit=256 data.test_limit=64 train.log_every=1"
# shellcheck disable=SC2086
emu run quickstart.ini $tiny 2>"$T/run.err" || { cat "$T/run.err"; fail "emu run quickstart.ini"; }
grep -qx "emu: using preset $P/share/emu/ini/quickstart.ini" "$T/run.err" ||
	fail "emu run did not say which preset: $(head -c 300 "$T/run.err")"
# the preset's run.name, its [net], the overrides; the output relative to this folder
[ -s runs/quickstart/eval.csv ] || fail "no runs/quickstart/eval.csv in $W"
grep -qx "loss = bernoulli" runs/quickstart/config.ini &&
	grep -qx "workers = 2" runs/quickstart/config.ini || fail "config.ini is not the preset's"
[ "$(last_col runs/quickstart/train.csv step)" = 4 ] || fail "the run did not stop at step 4"

# a file of that name here comes first, and nothing is said about presets
sed 's/^loss = bernoulli/loss = none/; /^loss_p/d' "$P/share/emu/ini/quickstart.ini" >quickstart.ini
emu check quickstart.ini >"$T/check.out" 2>"$T/check.err" || fail "emu check ./quickstart.ini"
grep -qx "loss = none" "$T/check.out" || fail "emu check took the preset, not ./quickstart.ini"
[ -s "$T/check.err" ] && fail "emu check of a local file said: $(cat "$T/check.err")"
rm quickstart.ini
emu check quickstart.ini 2>"$T/check.err" | grep -qx "loss = bernoulli" ||
	fail "emu check quickstart.ini: $(cat "$T/check.err")"

# nothing found: exit 2, and every place looked is named
rc=0; emu check nosuch.ini >/dev/null 2>"$T/none.err" || rc=$?
[ $rc -eq 2 ] || fail "emu check nosuch.ini: exit $rc, expected 2"
grep -qF "($W)" "$T/none.err" && grep -qF "$P/share/emu/ini" "$T/none.err" ||
	fail "nosuch.ini: the message does not name $W and $P/share/emu/ini: $(cat "$T/none.err")"
emu help presets | grep -q "^quickstart\.ini  *$P/share/emu/ini/quickstart\.ini$" ||
	fail "emu help presets: $(emu help presets 2>&1 | head -3)"

# --- the manual page -----------------------------------------------------------------
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww "$P/share/man/man1/emu.1" 2>"$T/groff.err" >/dev/null
	[ -s "$T/groff.err" ] && fail "groff -ww warns about emu.1: $(head -5 "$T/groff.err")"
fi
noman=""
if command -v man >/dev/null; then
	MANPATH="$P/share/man" man emu >"$T/man.out" 2>"$T/man.err" ||
		fail "MANPATH=$P/share/man man emu: $(cat "$T/man.err")"
	for s in NAME SYNOPSIS COMMANDS "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
		grep -q "^$s" "$T/man.out" || fail "man emu has no section $s"
	done
	for w in "emu run" "emu check" "emu bench" "emu help" "emu compare" "emu sweep" \
		"128+N" "status.json" "share/emu/ini"; do
		grep -qF "$w" "$T/man.out" || fail "man emu does not mention '$w'"
	done
else
	noman="man is not installed (scripts/install-deps test installs man-db)"
fi

# --- bash completion -----------------------------------------------------------------
# c WORD...: COMPREPLY for the command line WORD... (the last word is being completed),
# as bash would call the function; one candidate a line
cat >"$T/complete.bash" <<'SH'
. "$P/share/bash-completion/completions/emu"
complete -p emu >/dev/null || { echo "no completion registered for emu"; exit 1; }
c() {
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_emu "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort
}
SH
comp() {	# comp WANT WORD...: the candidates, joined by '|', must be WANT
	want=$1; shift
	got=$(P=$P bash -c '. "$0"; c "$@"' "$T/complete.bash" "$@" | paste -sd '|')
	[ "$got" = "$want" ] || fail "completion of '$*': '$got', expected '$want'"
}
comp "resume|run" emu r
comp "quickstart.ini" emu run quick
comp "net.loss=|net.loss_correlation=|net.loss_p=" emu run x.ini net.lo
comp "link 0-1.latency=" emu run x.ini "'link 0-1.lat"
comp "bernoulli" emu run x.ini net.loss = b
comp "--links" emu check --li
comp "--json|--markdown|--names" emu help keys --
(cd "$SRCDIR" && comp "ini/quickstart.ini" emu run ini/q)
# the names come from the binary's key table: every key, link and worker forms included
emu help keys --names >"$T/names"
[ "$(grep -c '^net\.' "$T/names")" -eq "$(grep -c '^link A-B\.' "$T/names")" ] &&
	grep -qx "worker A-B.slowdown" "$T/names" && grep -qx "train.max_steps" "$T/names" ||
	fail "emu help keys --names: $(head -3 "$T/names")"

# --- the installed plot scripts --------------------------------------------------------
gnuplot -e "runs='runs/quickstart'; out='acc.png'" "$P/share/emu/plots/accuracy.gp" \
	2>"$T/gp.err" || fail "accuracy.gp from $P: $(cat "$T/gp.err")"
png() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$1 is no PNG"; }
png acc.png
emu-plots >"$T/plots.out" 2>&1 || fail "emu-plots: $(cat "$T/plots.out")"
ls runs/figures/*.png >/dev/null 2>&1 || fail "emu-plots drew nothing: $(cat "$T/plots.out")"
for f in runs/figures/*.png; do png "$f"; done

# --- uninstall -------------------------------------------------------------------------
cd "$SRCDIR"
mk uninstall PREFIX="$P"
left=$(find "$P" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
[ ! -e "$P/share/emu" ] || fail "make uninstall left $P/share/emu"
[ -z "$noman" ] || skip "$noman; the rest passed"
echo "installed in $P, used from $W, uninstalled"

# make install and make uninstall with any PREFIX and DESTDIR: a PREFIX with a blank (a
# quote, a leading dash) installs into that one folder (no stray folders beside it), the installed
# emu-plots draws from there, and uninstall removes only what install put: a file named
# like the PREFIX's first word survives it.  DESTDIR with a blank stages the same tree.
# env: EMU, SRCDIR, BUILD (tests/run.sh)
. "$SRCDIR/tests/lib.sh"
cd "$SRCDIR"
B=$(realpath "$T")
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
	BUILD="${BUILD:-build}" "$@" >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make $*"; }; }
# the folders and files under $B, one a line (the make log aside)
tree() { (cd "$B" && find . ! -name make.log | sort); }

P="$B/pre fix"
echo mine >"$B/pre"	# the first word of PREFIX: a file of the user's, not emu's
mkdir "$B/fix" && echo mine >"$B/fix/keep"
mk install PREFIX="$P"
for f in bin/emu bin/emu-plots share/emu/ini/quickstart.ini share/emu/plots/common.gp \
	share/man/man1/emu.1 share/bash-completion/completions/emu; do
	[ -f "$P/$f" ] || fail "make install PREFIX='$P' put no $P/$f"
done
[ "$(cat "$B/pre")" = mine ] || fail "make install wrote into $B/pre"
stray=$(tree | grep -v -e "^\./pre fix" -e '^\.$' -e "^\./pre$" -e "^\./fix") || true
[ -z "$stray" ] || fail "make install made stray paths: $stray"

# the installed emu-plots finds its scripts under that PREFIX and draws a run
small_ini "$T/s.ini"
"$EMU" run "$T/s.ini" run.output="$B/w/runs/r" train.max_steps=10 train.eval_every=5 \
	>/dev/null 2>"$T/err" || { cat "$T/err"; fail "emu run"; }
(cd "$B/w" && "$P/bin/emu-plots") >"$T/plots.out" 2>&1 || fail "emu-plots: $(cat "$T/plots.out")"
[ -s "$B/w/runs/figures/r-accuracy.png" ] || fail "the installed emu-plots drew nothing: $(cat "$T/plots.out")"
rm -rf "$B/w"

mk uninstall PREFIX="$P"
[ "$(cat "$B/pre" 2>/dev/null)" = mine ] || fail "make uninstall PREFIX='$P' removed $B/pre"
[ "$(cat "$B/fix/keep" 2>/dev/null)" = mine ] || fail "make uninstall removed $B/fix/keep"
left=$(cd "$P" && find . -type f | sort | paste -sd' ')
[ -z "$left" ] || fail "make uninstall left: $left"
[ ! -e "$P/share/emu" ] || fail "make uninstall left $P/share/emu"

# a quote and a leading dash in PREFIX's last folder
Q="$B/-it's"
mk install PREFIX="$Q"
[ -f "$Q/bin/emu" ] && [ -f "$Q/share/emu/ini/quickstart.ini" ] || fail "make install PREFIX='$Q'"
mk uninstall PREFIX="$Q"
left=$(cd "$Q" && find . -type f | sort | paste -sd' ')
[ -z "$left" ] || fail "make uninstall PREFIX='$Q' left: $left"

# DESTDIR with a blank, PREFIX with a blank
D="$B/st age"
mk install DESTDIR="$D" PREFIX="/opt/e mu"
[ -f "$D/opt/e mu/bin/emu" ] && [ -f "$D/opt/e mu/share/emu/plots/common.gp" ] ||
	fail "make install DESTDIR='$D' PREFIX='/opt/e mu': $(cd "$B" && find . -type f | head -3)"
[ ! -e "$B/st" ] && [ ! -e /opt/e ] || fail "make install DESTDIR with a blank made $B/st or /opt/e"
mk uninstall DESTDIR="$D" PREFIX="/opt/e mu"
left=$(cd "$D" && find . -type f | sort | paste -sd' ')
[ -z "$left" ] || fail "make uninstall DESTDIR='$D' left: $left"
# a $ in PREFIX or DESTDIR, which make would expand: refused, nothing installed or removed
for bad in "PREFIX=$B/p \$(touch $B/MARK)" "PREFIX=$B/p\$HOME\$\$" "DESTDIR=$B/d\$(x)"; do
	tree >"$T/before"
	for target in install uninstall; do
		rc=0
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
			BUILD="${BUILD:-build}" $target "$bad" >"$T/make.log" 2>&1 || rc=$?
		[ $rc -ne 0 ] || fail "make $target '$bad' was not refused"
		grep -q "PREFIX and DESTDIR may not hold a '\$'" "$T/make.log" ||
			{ cat "$T/make.log"; fail "make $target '$bad': no message"; }
	done
	tree | diff "$T/before" - >/dev/null || fail "make install '$bad' changed $B"
done
[ ! -e "$B/MARK" ] || fail "a \$(...) in PREFIX ran"
echo "installed under '$P' and '$D', drawn, uninstalled; $B/pre kept; a \$ refused"

#!/bin/sh
# The bash completion's commands are emu's own (emu help --names): every command of the
# table, resume included, and a command a build adds is offered without a change to the
# completion (a wrapper emu whose table has one more command stands for such a build).
. "$SRCDIR/tests/lib.sh"
command -v bash >/dev/null || skip "no bash"
cat >"$T/c.bash" <<'SH'
. "$SRCDIR/completion/emu.bash"
c() {	# c WORD...: the candidates for the last word, joined by '|'
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
	_emu "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd '|'
}
c "$@"
SH
comp() {	# comp WANT WORD...
	want=$1; shift
	got=$(SRCDIR=$SRCDIR bash "$T/c.bash" "$@")
	[ "$got" = "$want" ] || fail "completion of '$*': '$got', expected '$want'"
}
comp "resume|run" "$EMU" r
comp "--help|--version|$("$EMU" help --names | sort | paste -sd '|')" "$EMU" ""
comp "resume" "$EMU" help res
# the list is the binary's: a wrapper whose table has one more command
cat >"$T/emu" <<SH
#!/bin/sh
if [ "\$1 \$2" = "help --names" ]; then "$EMU" help --names; echo zzextra; exit 0; fi
exec "$EMU" "\$@"
SH
chmod +x "$T/emu"
comp "zzextra" "$T/emu" zz
echo "completion: emu's commands, resume included, from emu help --names"

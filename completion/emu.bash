# completion/emu.bash — bash completion for emu: its commands and their options, INI
# files and presets, section.key= overrides and the values of a choice.  Everything but
# the shape of a command line is asked of the emu being completed (emu help --names, emu
# help COMMAND, emu help presets, emu help keys --names and --json), so that the completion
# never falls behind the binary, whichever binary it is (emu, build/emu).
#
# make install puts it in PREFIX/share/bash-completion/completions/emu, where the
# bash-completion package finds it for an emu in PREFIX/bin; by hand: . completion/emu.bash

# _emu_ask EMU ARGS...: EMU's answer on stdout, nothing when it fails
_emu_ask()
{
	"$@" 2>/dev/null
}

# _emu_add COMPGEN-ARGS...: compgen's words appended to COMPREPLY, one a line (a file
# name with a space stays one word)
_emu_add()
{
	local w
	while IFS= read -r w; do
		[ -n "$w" ] && COMPREPLY+=("$w")
	done < <(compgen "$@" 2>/dev/null)
}

# _emu_commands EMU: the commands of emu's own table (emu help --names), or of its usage
# ("  emu run FILE.ini ...") for an emu without --names
_emu_commands()
{
	_emu_ask "$1" help --names ||
		_emu_ask "$1" --help | awk '$1 == "emu" && $2 ~ /^[a-z]/ { print $2 }' | sort -u
}

# _emu_options EMU COMMAND...: the --options its help names; with -a, only those that
# take an argument (written "--jobs N" or "--tol=REL" there)
_emu_options()
{
	local emu=$1 with=
	shift
	[ "$1" = -a ] && { with=1; shift; }
	if [ -n "$with" ]; then
		_emu_ask "$emu" help "$@" | grep -oE -- '--[a-z][a-z0-9-]*[ =][A-Z][A-Z_]*' |
			sed 's/[ =].*//' | sort -u
	else
		_emu_ask "$emu" help "$@" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
	fi
}

# _emu_reply QUOTED WORD...: COMPREPLY from candidates, spaces escaped unless the word
# being completed opened a quote (then readline replaces the text after the quote)
_emu_reply()
{
	local quoted=$1 w
	shift
	for w in "$@"; do
		[ -n "$quoted" ] || w=${w// /\\ }
		COMPREPLY+=("$w")
	done
}

# _emu_overrides EMU CUR QUOTED: section.key=value arguments
_emu_overrides()
{
	local emu=$1 cur=$2 quoted=$3 names form key w
	local -a out=()
	names=$(_emu_ask "$emu" help keys --names) || return
	case $cur in
	link\ *.* | worker\ *.*)
		# [link 0-1] takes the keys of link A-B, as written: keep what was typed
		form=${cur%% *}
		while read -r w; do
			case $w in "$form A-B."*) out+=("${cur%.*}.${w#*.}=") ;; esac
		done <<<"$names"
		;;
	*.*)
		while read -r w; do
			case $w in *\ *) ;; *) out+=("$w=") ;; esac
		done <<<"$names"
		;;
	*)
		# the sections first: "net." then its keys; "link " then the link's ids
		while read -r w; do
			case $w in *\ *) out+=("${w%% *} ") ;; *) out+=("${w%%.*}.") ;; esac
		done <<<"$names"
		;;
	esac
	# (by hand, not compgen -W: candidates hold spaces)
	mapfile -t out < <(for w in "${out[@]}"; do
		[[ $w == "$cur"* ]] && printf '%s\n' "$w"
	done | sort -u)
	_emu_reply "$quoted" "${out[@]}"
	compopt -o nospace 2>/dev/null
	return 0
}

# _emu_values EMU KEY CUR: the values of a choice key (section.key, link A-B.key, ...)
_emu_values()
{
	local emu=$1 key=$2 cur=$3 sect name
	sect=${key%.*} name=${key##*.}
	sect=${sect%% *}
	[ "$sect" = link ] && sect=net
	# one key per line in the JSON: its section, its name, then its values
	_emu_add -W "$(_emu_ask "$emu" help keys --json |
		grep -F "{\"section\": \"$sect\"," | grep -F "\"name\": \"$name\"," |
		sed -n 's/.*"values": \[\([^]]*\)\].*/\1/p' | tr -d '",')" -- "$cur"
}

# _emu_ini EMU CUR: *.ini files, folders, and the presets emu finds by name
_emu_ini()
{
	local emu=$1 cur=$2
	compopt -o filenames 2>/dev/null
	_emu_add -f -X '!*.ini' -- "$cur"
	_emu_add -d -- "$cur"
	case $cur in
	*/*) ;;
	*) _emu_add -W "$(_emu_ask "$emu" help presets | awk '{ print $1 }')" -- "$cur" ;;
	esac
}

_emu()
{
	local cword=$COMP_CWORD raw=${COMP_WORDS[COMP_CWORD]-} cur quoted='' emu cmd i w
	local -a words=("${COMP_WORDS[@]}")
	COMPREPLY=()
	emu=${words[0]}
	# (a "~/bin/emu" as typed: readline has not expanded the tilde)
	# shellcheck disable=SC2088
	[[ $emu == '~/'* ]] && emu=$HOME/${emu#'~/'}
	type -P -- "$emu" >/dev/null || return 0

	# the word as readline sees it: after an opening quote, backslashes undone
	cur=$raw
	case $cur in
	\'* | \"*) quoted=1; cur=${cur:1} ;;
	*) cur=${cur//\\ / } ;;
	esac

	# '=' breaks words for readline: "net.loss" "=" "bern" is one override
	if [ "$cword" -ge 2 ] && [ "${words[cword - 1]}" = "=" ] && [ -z "$quoted" ]; then
		_emu_values "$emu" "${words[cword - 2]//\\ / }" "$cur"
		return 0
	fi
	if [ "$cword" -ge 1 ] && [[ $cur == *=* ]]; then	# a word that kept its '='
		_emu_values "$emu" "${cur%%=*}" "${cur#*=}"
		COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
		return 0
	fi
	if [ "$cword" -eq 1 ]; then
		_emu_add -W "$(_emu_commands "$emu") --help --version" -- "$cur"
		return 0
	fi
	cmd=${words[1]}
	case $cmd in
	help)
		if [ "$cword" -eq 2 ]; then
			_emu_add -W "$(_emu_commands "$emu") keys presets \
				$(_emu_ask "$emu" help keys --names | sed 's/[ .].*//' | sort -u)" \
				-- "$cur"
		elif [ "$cword" -eq 3 ] && [ "${words[2]}" = keys ]; then
			_emu_add -W "--markdown --names --json" -- "$cur"
		fi
		return 0
		;;
	bench)
		if [ "$cword" -eq 2 ]; then
			_emu_add -W "$(_emu_ask "$emu" help bench |
				sed -n 's/.*emu bench \([a-z|]*\).*/\1/p' | tr '|' ' ') --help" -- "$cur"
		else
			_emu_add -W "$(_emu_ask "$emu" bench "${words[2]}" --help |
				grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"
		fi
		return 0
		;;
	esac

	if [[ $cur == -* ]]; then
		_emu_add -W "$(_emu_options "$emu" "$cmd") --help" -- "$cur"
		return 0
	fi
	# an option that takes an argument: the argument is the user's
	for w in $(_emu_options "$emu" "$cmd" -a); do
		[ "${words[cword - 1]}" = "$w" ] && return 0
	done
	# a command whose usage names FILE.ini: the file first (an option's argument is not
	# it), then overrides; any other command (compare's run folders): files and folders
	if _emu_ask "$emu" help "$cmd" | grep -q 'FILE\.ini'; then
		local takes file=''
		takes=" $(_emu_options "$emu" "$cmd" -a | tr '\n' ' ') "
		for ((i = 2; i < cword; i++)); do
			w=${words[i]}
			case $w in
			-*) [[ $takes == *" $w "* ]] && ((i++)) ;;
			*) file=$w; break ;;
			esac
		done
		if [ -z "$file" ]; then
			_emu_ini "$emu" "$cur"
		else
			_emu_overrides "$emu" "$cur" "$quoted"
		fi
		return 0
	fi
	compopt -o filenames 2>/dev/null
	_emu_add -f -- "$cur"
	return 0
}

complete -F _emu emu

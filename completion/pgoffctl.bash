# SPDX-License-Identifier: GPL-2.0-only
# bash completion for pgoffctl(1): commands, each command's options, and
# the values of --type, --pg-wait, --view, --by, --pid and --socket.
# Needs nothing but bash: bash-completion's _filedir is used for file
# names when it is loaded, compgen -f otherwise.
# Installed as $PREFIX/share/bash-completion/completions/pgoffctl.

# Options of each command ("" before the command), as its --help prints
# them (tests/unit/test_docs.sh checks that every one is here), into opts.
_pgoffctl_options() {
	case $1 in
	status | ps | history) opts=(--json --socket --help) ;;
	watch) opts=(--view --pid --type --pg-wait --db --backend-type --query-id --container --min
		--user-stack --since --resume --count --timeout --follow --json --socket
		--help) ;;
	top) opts=(--interval --by --once --json --pid --db --query-id --container --limit --idle --since --until
		--at --window --socket --help) ;;
	flame) opts=(--duration --folded --min --pid --type --pg-wait --db
		--backend-type --query-id --container --user-stack --by --idle --title --pprof --since --until --diff
		--socket --help) ;;
	metrics) opts=(--per-pid --socket --help) ;;
	"") opts=(--socket --help --version) ;;
	*) opts=() ;;
	esac
}

# COMPREPLY: the words of "$@" that start with $cur.
_pgoffctl_words() {
	local w
	COMPREPLY=()
	for w in "$@"; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done
}

# COMPREPLY: the last name of a comma-separated list in $cur, from "$@",
# leaving out the names already in the list ("io,n" -> "io,net").
_pgoffctl_list() {
	local prefix="" last=$cur w
	COMPREPLY=()
	if [[ $cur == *,* ]]; then
		prefix=${cur%,*},
		last=${cur##*,}
	fi
	for w in "$@"; do
		[[ $w == "$last"* && ",$prefix" != *",$w,"* ]] &&
			COMPREPLY+=("$prefix$w")
	done
}

# Pids of running PostgreSQL processes (their comm is "postgres").
_pgoffctl_pids() {
	local d comm
	if type -P pgrep >/dev/null; then
		pgrep -x postgres
		return 0
	fi
	for d in /proc/[0-9]*; do
		{ read -r comm <"$d/comm"; } 2>/dev/null || continue
		[[ $comm == postgres ]] && echo "${d#/proc/}"
	done
	return 0
}

_pgoffctl_files() {
	if declare -F _filedir >/dev/null; then
		_filedir
		return
	fi
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

_pgoffctl() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev="" cmd="" i w
	local -a pids opts

	COMPREPLY=()
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# "--type=lo" reaches us as "--type" "=" "lo" (= breaks words)
	if [[ $cur == = ]]; then
		cur=""
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi

	# the command: the first word that is neither an option nor the
	# argument of --socket
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--socket)
			((i++))
			[[ ${COMP_WORDS[i]} == = ]] && ((i++))
			;;
		-*) ;;
		*)
			cmd=$w
			break
			;;
		esac
	done

	case $prev in
	--socket | --pprof | \> | \>\> | \<)
		_pgoffctl_files
		return 0
		;;
	--type)
		_pgoffctl_list lock io net poll sleep ipc memory cpu other
		return 0
		;;
	--pg-wait)
		# wait event types as pg_stat_activity names them
		_pgoffctl_list Activity BufferPin Client Extension IO IPC Lock \
			LWLock Timeout
		return 0
		;;
	--view)
		_pgoffctl_words waits intervals both
		return 0
		;;
	--by)
		_pgoffctl_words backend wait database query query,wait
		return 0
		;;
	--pid)
		mapfile -t pids < <(_pgoffctl_pids)
		_pgoffctl_words "${pids[@]}"
		return 0
		;;
	--min | --count | --timeout | --interval | --duration | --limit | \
		--db | --backend-type | --title | --query-id)
		return 0	# a value of the user's own
		;;
	esac

	if [[ -z $cmd && $cur != -* ]]; then
		_pgoffctl_words status ps history watch top flame metrics
		return 0
	fi
	_pgoffctl_options "$cmd"
	_pgoffctl_words "${opts[@]}"
	return 0
}

complete -F _pgoffctl pgoffctl

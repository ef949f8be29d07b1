#!/bin/sh
# Runs every test program (build/tests/test_*) and every shell test (tests/*.test.sh)
# under a timeout, one at a time, and counts them: exit 0 passes, 77 skips (the test
# prints why), anything else fails.  A check a cmocka program skips inside (skip(), exit
# 0) counts as a skip of its own beside the program's pass, with the line the check
# printed just before it as the reason: never hidden in a PASS.  Output of failing and
# skipped tests is shown.  The GPU tests (gpu_*) run only for a CUDA build
# (BUILD=build-cuda...), the MPI tests (mpi_*) only for the MPI build (BUILD=build-mpi:
# make test-mpi).
# Usage: tests/run.sh [NAME-PATTERN]      env: BUILD (default build), TEST_TIMEOUT (s)
BUILD=${BUILD:-build}
pattern=${1:-}
timeout_s=${TEST_TIMEOUT:-300}
export EMU="$PWD/$BUILD/emu" SRCDIR="$PWD" BUILD
pass=0 fail=0 skip=0 failed=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$BUILD"/tests/test_* tests/*.test.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t")
	case "$name" in *"$pattern"*) ;; *) continue ;; esac
	# the GPU tests belong to the CUDA build (make test-gpu); elsewhere they cannot apply
	case "$name:$BUILD" in gpu_*:*cuda*) ;; gpu_*) continue ;; esac
	case "$name:$BUILD" in mpi_*:*mpi*) ;; mpi_*) continue ;; esac
	start=$(date +%s)
	# each test in a process group of its own: whatever it leaves running (a test killed
	# by the timeout leaves its emu behind) is found, reported and killed
	case "$t" in
	*.sh) setsid timeout -k 5 "$timeout_s" bash "$t" >"$log" 2>&1 & ;;
	*) setsid timeout -k 5 "$timeout_s" "$t" >"$log" 2>&1 & ;;
	esac
	group=$!
	wait $group
	rc=$?
	# (a child on its way out gets a second; zombies are not running)
	for i in 1 2 3 4 5 6 7 8 9 10; do pgrep -g $group -r R,S,D,T,t >/dev/null || break; sleep 0.1; done
	if left=$(pgrep -g $group -r R,S,D,T,t); then
		echo "left running by $name:" >>"$log"
		ps -o pid,ppid,etime,cmd -p "$(echo $left | tr " " ,)" >>"$log"
		pkill -KILL -g $group
		[ $rc -eq 0 ] && rc=1
	fi
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)"
	   # cmocka names a skipped check "[  SKIPPED ] name" (twice: where it ran, and in
	   # the summary); the line before the first is the reason the check printed
	   inner=$(awk '/^\[  SKIPPED \] [A-Za-z0-9_]+$/ && !seen[$4]++ { print $4 ": " prev }
			{ prev = $0 }' "$log")
	   if [ -n "$inner" ]; then
		skip=$((skip + $(printf '%s\n' "$inner" | wc -l)))
		printf '%s\n' "$inner" | sed "s/^/SKIP $name: check /"
	   fi ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed="$failed $name"
	   echo "FAIL $name (exit $rc, ${secs}s)"; sed 's/^/    /' "$log" | tail -n 40 ;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
[ -n "${EMU_TEST_TALLY:-}" ] && echo "$pass $fail $skip" >>"$EMU_TEST_TALLY"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

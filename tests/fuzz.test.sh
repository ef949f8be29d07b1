# The libFuzzer targets (tests/fuzz/), each for a few seconds (FUZZ_SECONDS, 2): the INI
# loader and the [event] sections must never crash, must say why they refuse, and must
# round-trip what they accept; the exchange's message decoder must never write outside
# its buffer; emu sweep's grid must number and name its runs consistently; the CSV
# reader must give back the table it read; the checkpoint reader must accept only files
# whose CRCs match, and agree with itself reading a file.  (make fuzz runs them for
# 10^7 executions.)  Skips when clang cannot build a fuzzer, and in the sanitizer build's
# suite: the targets are their own build (build-fuzz, clang with its sanitizers) whatever
# BUILD is, so the optimised build's suite has run them already.
case ${BUILD:-build} in
*-san*) echo "skip: the fuzz targets (build-fuzz) ran in the optimised build's suite"; exit 77 ;;
esac
cd "$SRCDIR" || exit 1
FUZZ_RUNS=${FUZZ_RUNS:-100000000} exec scripts/fuzz "${FUZZ_SECONDS:-2}"

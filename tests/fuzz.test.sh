# The libFuzzer targets (tests/fuzz/), each for a few seconds (FUZZ_SECONDS, 3): the INI
# loader and the [event] sections must never crash, must say why they refuse, and must
# round-trip what they accept; the exchange's message decoder must never write outside
# its buffer; emu sweep's grid must number and name its runs consistently; the CSV
# reader must give back the table it read; the checkpoint reader must accept only files
# whose CRCs match, and agree with itself reading a file.  (make fuzz runs them for
# 10^7 executions.)  Skips when clang cannot build a fuzzer.
cd "$SRCDIR" || exit 1
FUZZ_RUNS=${FUZZ_RUNS:-100000000} exec scripts/fuzz "${FUZZ_SECONDS:-3}"

# The libFuzzer targets (tests/fuzz/), each for a short bounded time: the INI loader with
# overrides must never crash, must say why it refuses, and must round-trip what it
# accepts; the exchange's message decoder must never write outside its buffer.
# (make fuzz runs them longer.)  Skips when clang cannot build a fuzzer.
cd "$SRCDIR" || exit 1
exec scripts/fuzz "${FUZZ_SECONDS:-15}"

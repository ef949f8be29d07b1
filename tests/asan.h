/* tests/asan.h — TEST_ASAN: 1 in a build under AddressSanitizer (make SANITIZE=1), whose
 * shadow memory takes terabytes of address space, so that a check that bounds a child's
 * address space (RLIMIT_AS, ulimit -v) cannot run there: it skips with this reason. */
#ifndef TESTS_ASAN_H
#define TESTS_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

#define TEST_ASAN_NO_RLIMIT "AddressSanitizer's shadow memory cannot live under RLIMIT_AS: " \
	"this bound is checked by the build without sanitizers"

#endif

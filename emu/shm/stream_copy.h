/* emu/shm/stream_copy.h — copying large payloads into shared memory past the caches.
 *
 * A ring's payload is read by another process, on another core and usually much later:
 * with more workers than cores, after others have run and filled the caches.  A plain
 * copy first reads every destination line into its own core's cache (to own it) and
 * leaves it there, dirty, for the reader's core to fetch from.  Non-temporal stores
 * write whole lines straight to memory: no read for ownership, no eviction of the
 * writer's working set, and the reader takes the line from memory as it would take a
 * cold one.  Measured on a 2-vCPU VM (emu bench net): a 16-worker exchange of 1M floats
 * through the rings, medians of 9 interleaved rounds in a quiet hour, 12.2 -> 11.9 ms
 * (12.1-13.4 -> 8.9-12.6 in four interleaved pairs in a busier one), and one ring
 * between two spinning cores at 64 KiB-4 MiB messages 2-19 GB/s (a copy through the
 * other core's cache, as slow as 2 GB/s when the host placed the vCPUs apart) ->
 * 14-23 GB/s.  Below STREAM_COPY_MIN bytes (headers, small messages, which a woken
 * reader finds in the shared cache) a plain copy.
 *
 * The stores are SSE2's 16-byte ones, four to a line, on every x86-64 build (the
 * portable one targets x86-64-v3): the line goes to memory whole once its four stores
 * are in the write-combining buffer, as with one 64-byte store.  Other
 * architectures (aarch64) copy with memcpy. */
#ifndef EMU_STREAM_COPY_H
#define EMU_STREAM_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__SSE2__)
#define STREAM_COPY_NT 1
#include <emmintrin.h>
#else
#define STREAM_COPY_NT 0
#endif

#define STREAM_COPY_MIN ((size_t)64 << 10)

/* memcpy(dst, src, n), with non-temporal stores from STREAM_COPY_MIN bytes on; the
 * stores are fenced before it returns, so a release store after it publishes them. */
static inline void stream_copy(void *dst, const void *src, size_t n)
{
#if STREAM_COPY_NT
	if (n >= STREAM_COPY_MIN) {
		uint8_t *d = dst;
		const uint8_t *s = src;
		size_t head = (64 - ((uintptr_t)d & 63)) & 63;	/* to d's next line */

		memcpy(d, s, head);
		d += head, s += head, n -= head;
		for (; n >= 64; n -= 64, d += 64, s += 64)
			for (int k = 0; k < 64; k += 16)
				_mm_stream_si128((__m128i *)(d + k),
						 _mm_loadu_si128((const __m128i *)(s + k)));
		memcpy(d, s, n);
		_mm_sfence();
		return;
	}
#endif
	memcpy(dst, src, n);
}

#endif

/* emu/shm/notify_uring.h — the io_uring half of notify (private to notify.c and supervisor.c).
 *
 * Debian's liburing 2.3 predates the futex opcodes (kernel 6.7), so the opcode numbers
 * and the SQE layout they use are written here once, checked against the kernel's
 * include/uapi/linux/io_uring.h (enum io_uring_op) and io_uring/futex.c (io_futex_prep,
 * io_futexv_prep):
 *   FUTEX_WAKE  (52): fd = FUTEX2_* flags, addr = futex word, addr2 (= off) = how many to
 *                     wake, addr3 = bitset mask; len, futex_flags, buf_index must be 0.
 *   FUTEX_WAITV (53): addr = struct futex_waitv[], len = count (1..128); fd, addr2,
 *                     addr3, futex_flags, buf_index must be 0.  Completes with the index
 *                     woken, or -EAGAIN when a word already differed.
 */
#ifndef EMU_NOTIFY_URING_H
#define EMU_NOTIFY_URING_H

#include <liburing.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>

struct notify_held;

#define NOTIFY_OP_FUTEX_WAIT 51
#define NOTIFY_OP_FUTEX_WAKE 52
#define NOTIFY_OP_FUTEX_WAITV 53

#define NOTIFY_FUTEX2_SIZE_U32 0x02	/* FUTEX2_SIZE_U32 (FUTEX_32 in older uapi) */

/* user_data tags of the SQEs notify submits; a wake's is its word's address (above
 * them); the supervisor uses tags >= 16 on a ring of its own. */
enum { NOTIFY_TAG_WAITV = 1, NOTIFY_TAG_CANCEL };

void notify_uring_prep_waitv(struct io_uring_sqe *sqe, struct futex_waitv *v, unsigned n);
void notify_uring_prep_wake(struct io_uring_sqe *sqe, _Atomic uint32_t *word, uint32_t nwake);

/* Create a ring and check the kernel supports what notify needs: 0 or -ENOSYS/-errno.
 * *out is a malloc'ed struct io_uring, released by notify_uring_free. */
int notify_uring_init(void **out);
void notify_uring_free(void *u);
/* The wakes of held[0..nheld) (notify.h), then a sleep on the count words of v
 * (1..NOTIFY_MAX_WORDS, checked by notify_wait), in one io_uring_enter where they fit
 * the queue.  Every wake is done whatever the sleep's fate: one that failed, or that
 * could not be submitted, by the syscall. */
int notify_uring_wait(void *u, const struct notify_held *held, int nheld,
		      struct futex_waitv *v, int count, int64_t timeout_ns);
/* The wakes of held[0..nheld), submitted together: 0, or the first failure (those
 * wakes then done by the syscall already). */
int notify_uring_wake(void *u, const struct notify_held *held, int nheld);

#endif

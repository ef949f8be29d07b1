/* emu/shm/notify_uring.c — futex wait/wake through io_uring submissions (see notify_uring.h). */
#include "emu/shm/notify_uring.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu/shm/notify.h"

void notify_uring_prep_waitv(struct io_uring_sqe *sqe, struct futex_waitv *v, unsigned n)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = NOTIFY_OP_FUTEX_WAITV;
	sqe->addr = (uint64_t)(uintptr_t)v;
	sqe->len = n;
}

void notify_uring_prep_wake(struct io_uring_sqe *sqe, _Atomic uint32_t *word, uint32_t nwake)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = NOTIFY_OP_FUTEX_WAKE;
	sqe->fd = NOTIFY_FUTEX2_SIZE_U32;	/* shared: no FUTEX2_PRIVATE */
	sqe->addr = (uint64_t)(uintptr_t)word;
	sqe->off = nwake;			/* addr2 */
	sqe->addr3 = FUTEX_BITSET_MATCH_ANY;
}

/* The fallback of wakes io_uring could not send; a wake sent twice costs a spurious
 * wake-up, which every sleeper tolerates (it looks at its words again). */
static void wake_syscall(const struct notify_held *held, int nheld)
{
	for (int i = 0; i < nheld; i++)
		syscall(SYS_futex, (void *)held[i].word, FUTEX_WAKE,
			held[i].nwake > INT_MAX ? INT_MAX : (int)held[i].nwake, NULL, NULL, 0);
}

/* A wake's CQE (its user_data, its word's address, above the small tags) means it
 * failed (queue_wakes).  Its wake is done with the syscall (every sleeper: the CQE does
 * not say how many), never dropped; returns the first such failure, or 0. */
static int failed_wake(struct io_uring_cqe *cqe)
{
	if (cqe->user_data <= NOTIFY_TAG_CANCEL || cqe->res >= 0)
		return 0;
	wake_syscall(&(struct notify_held){ (_Atomic uint32_t *)(uintptr_t)cqe->user_data,
					    INT_MAX }, 1);
	return cqe->res;
}

static int reap_stale(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int first = 0;

	while (io_uring_peek_cqe(ring, &cqe) == 0) {
		int r = failed_wake(cqe);

		first = first ? first : r;
		io_uring_cqe_seen(ring, cqe);
	}
	return first;
}

static int submit(struct io_uring *ring)
{
	int ret;

	do
		ret = io_uring_submit(ring);
	while (ret == -EINTR);
	return ret;
}

/* The SQEs of the wakes, queued with IOSQE_CQE_SKIP_SUCCESS and their word's address as
 * user_data (failed_wake); a full queue is submitted first.  0 or -errno (then some
 * may not have been submitted: the caller does them all by the syscall). */
static int queue_wakes(struct io_uring *ring, const struct notify_held *held, int nheld)
{
	for (int i = 0; i < nheld; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe) {
			int ret = submit(ring);

			if (ret < 0)
				return ret;
			sqe = io_uring_get_sqe(ring);
			if (!sqe)
				return -EBUSY;
		}
		notify_uring_prep_wake(sqe, held[i].word,
				       held[i].nwake > INT32_MAX ? INT32_MAX : held[i].nwake);
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
		sqe->user_data = (uint64_t)(uintptr_t)held[i].word;
	}
	return 0;
}

/* Submit what is queued and wait for one CQE; submission that a signal interrupted is
 * retried by the next call, because liburing counts unconsumed SQ entries. */
static int next_cqe(struct io_uring *ring, struct io_uring_cqe **cqe)
{
	int ret = io_uring_peek_cqe(ring, cqe);

	if (ret == 0)
		return 0;
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret < 0)
		return ret;
	return io_uring_peek_cqe(ring, cqe);
}

/* The waitv's SQE behind the queued wakes; when they fill the queue, they go first. */
static struct io_uring_sqe *wait_sqe(struct io_uring *ring, const struct notify_held *held,
				     int nheld)
{
	int ret = queue_wakes(ring, held, nheld);
	struct io_uring_sqe *sqe = ret < 0 ? NULL : io_uring_get_sqe(ring);

	if (!sqe && ret == 0 && (ret = submit(ring)) >= 0) {
		reap_stale(ring);
		sqe = io_uring_get_sqe(ring);
	}
	if (ret < 0)
		wake_syscall(held, nheld);
	return sqe;
}

int notify_uring_wait(void *u, const struct notify_held *held, int nheld,
		      struct futex_waitv *v, int count, int64_t timeout_ns)
{
	struct io_uring *ring = u;
	struct __kernel_timespec ts;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int pending = 1, res = 0, ret;
	bool timed_out = false, interrupted = false, cancelled = false;
	int64_t deadline = timeout_ns >= 0 ? notify_now_ns() + timeout_ns : -1;

	reap_stale(ring);
	sqe = wait_sqe(ring, held, nheld);
	if (!sqe)
		return -EBUSY;
	notify_uring_prep_waitv(sqe, v, (unsigned)count);
	sqe->user_data = NOTIFY_TAG_WAITV;
	while (pending > 0) {
		/* The timeout rides on the wait itself (IORING_ENTER_EXT_ARG): a wake costs
		 * no timeout SQE and no second CQE; only an expired wait pays for a cancel.
		 * Each round waits what is left of the deadline: liburing 2.3 returns the
		 * submit count, not -ETIME, when one enter both submits and times out. */
		int64_t left = deadline >= 0 ? deadline - notify_now_ns() : 0;

		if (deadline >= 0 && !cancelled && left <= 0) {
			/* The wait must be in the kernel to be cancelled.  A ring that refuses
			 * it (another thread's: -EEXIST) leaves it queued, and the queue may
			 * have no entry left for the cancel: the syscall waits instead, or
			 * this loop would spin for ever (tests/test_notify.c). */
			ret = submit(ring);
			if (ret < 0) {
				wake_syscall(held, nheld);	/* they did not go either */
				return ret;
			}
			ret = -ETIME;
		} else if (deadline >= 0 && !cancelled) {
			ts.tv_sec = left / 1000000000;
			ts.tv_nsec = left % 1000000000;
			ret = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
		} else {
			ret = next_cqe(ring, &cqe);
		}
		if (ret == -EINTR || ret == -ETIME) {
			timed_out |= ret == -ETIME;
			interrupted |= ret == -EINTR;
			if (!cancelled && (sqe = io_uring_get_sqe(ring))) {
				/* Leave no wait behind: cancel it and reap its CQE. */
				io_uring_prep_cancel64(sqe, NOTIFY_TAG_WAITV, 0);
				sqe->user_data = NOTIFY_TAG_CANCEL;
				cancelled = true;
				pending++;
			}
			continue;
		}
		if (ret < 0 && ret != -EAGAIN) {
			wake_syscall(held, nheld);	/* they may not have gone */
			return ret;	/* the ring is unusable; nothing sane is left to reap */
		}
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			if (cqe->user_data == NOTIFY_TAG_WAITV) {
				res = cqe->res;
				pending--;
			} else if (cqe->user_data == NOTIFY_TAG_CANCEL) {
				pending--;
			} else {
				failed_wake(cqe);
			}
			io_uring_cqe_seen(ring, cqe);
		}
	}
	if (res >= 0 || res == -EAGAIN)
		return 0;	/* woken (index), or a word already differed */
	if (res == -ECANCELED)
		return timed_out ? -ETIMEDOUT : interrupted ? -EINTR : 0;
	return res;
}

int notify_uring_wake(void *u, const struct notify_held *held, int nheld)
{
	struct io_uring *ring = u;

	reap_stale(ring);
	int ret = queue_wakes(ring, held, nheld);

	if (ret == 0)
		ret = submit(ring);
	if (ret < 0) {
		wake_syscall(held, nheld);
		return ret;
	}
	/* A wake completes as it is submitted: a failure's CQE is there now (and its
	 * wake was done by the syscall); the caller counts it. */
	return reap_stale(ring);
}

/* The opcodes exist and the hand-filled SQEs are accepted: a waitv on a word that
 * already differs must complete with -EAGAIN, a wake with nobody waiting with 0. */
static int probe(struct io_uring *ring)
{
	static const int ops[] = { NOTIFY_OP_FUTEX_WAKE, NOTIFY_OP_FUTEX_WAITV,
				   IORING_OP_LINK_TIMEOUT, IORING_OP_ASYNC_CANCEL };
	struct io_uring_probe *pr = io_uring_get_probe_ring(ring);
	_Atomic uint32_t word = 1;
	struct futex_waitv v = { .val = 0, .uaddr = (uintptr_t)&word,
				 .flags = NOTIFY_FUTEX2_SIZE_U32 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret = 0, res[2];

	if (!pr)
		return -ENOSYS;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!io_uring_opcode_supported(pr, ops[i]))
			ret = -ENOSYS;
	io_uring_free_probe(pr);
	if (ret)
		return ret;
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	notify_uring_prep_waitv(sqe, &v, 1);
	sqe->user_data = 0;
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	notify_uring_prep_wake(sqe, &word, 1);
	sqe->user_data = 1;
	ret = io_uring_submit_and_wait(ring, 2);
	if (ret < 0)
		return ret;
	for (int i = 0; i < 2; i++) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret < 0)
			return ret;
		res[cqe->user_data & 1] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	return res[0] == -EAGAIN && res[1] == 0 ? 0 : -ENOSYS;
}

/* Every held wake and the wait in one submission (notify.h) */
enum { QUEUE = 2 * NOTIFY_MAX_HELD };

int notify_uring_init(void **out)
{
	struct io_uring *ring = calloc(1, sizeof(*ring));
	int ret;

	if (!ring)
		return -ENOMEM;
	/* Completions run when this process waits, not as interrupts of its compute. */
	ret = io_uring_queue_init(QUEUE, ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (ret == -EINVAL)
		ret = io_uring_queue_init(QUEUE, ring, 0);
	if (ret < 0)
		goto err;
	ret = probe(ring);
	if (ret < 0) {
		io_uring_queue_exit(ring);
		goto err;
	}
	*out = ring;
	return 0;
err:
	free(ring);
	return ret == -EPERM || ret == -EINVAL ? -ENOSYS : ret;
}

void notify_uring_free(void *u)
{
	if (!u)
		return;
	io_uring_queue_exit(u);
	free(u);
}

/* Are TSC reads in order? Two threads hand a token back and forth; each, on receiving it,
 * reads the TSC and checks that its reading is not earlier than the one the other thread
 * made before handing the token over. A read that comes out earlier ran ahead of the load
 * that received the token: the CPU executed the rdtsc out of order.
 *
 *   cc -O2 -pthread -o tsc_order bench/tsc_order.c
 *   ./tsc_order HANDOVERS      -> one line per way of reading:
 *        MODE handovers N backwards N worst_ticks N
 *
 * Ways of reading (src/probe/clock.rs chooses between them):
 *   bare          rdtsc right after the token's load;
 *   lfence        lfence; rdtsc (the kernel's rdtsc_ordered);
 *   after_syscall a syscall (getppid) between the token's load and a bare rdtsc, as in the
 *                 job engine's psync loop, where the completion's read follows the
 *                 pread/pwrite that returns.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

enum mode { BARE, LFENCE, AFTER_SYSCALL };

static const char *names[] = {"bare", "lfence", "after_syscall"};

struct shared {
	_Atomic int turn;
	_Atomic uint64_t last;
	long handovers;
	enum mode mode;
	long backwards[2];
	uint64_t worst[2];
};

static inline uint64_t read_tsc(enum mode m) {
	switch (m) {
	case LFENCE:
		_mm_lfence();
		return __rdtsc();
	case AFTER_SYSCALL:
		syscall(SYS_getppid);
		return __rdtsc();
	default:
		return __rdtsc();
	}
}

struct arg {
	struct shared *s;
	int me;
};

static void *player(void *p) {
	struct arg *a = p;
	struct shared *s = a->s;
	for (long i = 0; i < s->handovers; i++) {
		while (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE) != a->me)
			_mm_pause();
		uint64_t before = __atomic_load_n(&s->last, __ATOMIC_RELAXED);
		uint64_t now = read_tsc(s->mode);
		if (now < before) {
			s->backwards[a->me]++;
			if (before - now > s->worst[a->me])
				s->worst[a->me] = before - now;
		}
		__atomic_store_n(&s->last, now, __ATOMIC_RELAXED);
		__atomic_store_n(&s->turn, 1 - a->me, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 400000;
	for (int m = BARE; m <= AFTER_SYSCALL; m++) {
		struct shared s;
		memset(&s, 0, sizeof s);
		s.handovers = n / 2;
		s.mode = m;
		pthread_t t[2];
		struct arg args[2] = {{&s, 0}, {&s, 1}};
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, player, &args[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		uint64_t worst = s.worst[0] > s.worst[1] ? s.worst[0] : s.worst[1];
		printf("%s handovers %ld backwards %ld worst_ticks %llu\n", names[m], 2 * s.handovers,
		       s.backwards[0] + s.backwards[1], (unsigned long long)worst);
	}
	return 0;
}

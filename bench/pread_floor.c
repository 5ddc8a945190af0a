/* The floor for `job` psync randread: a bare loop of pread(2) calls at random aligned
 * offsets of a (cached) file, timed as a whole, no per-operation clock.
 *
 *   cc -O2 -o pread_floor bench/pread_floor.c
 *   ./pread_floor FILE BS OPS      -> prints "ns_per_op N iops N cpu_ns_per_op N"
 *
 * cpu_ns_per_op is the process's CPU time (user + system) per pread: on a shared machine
 * the wall time also counts the time other processes had the CPU.
 *
 * Offsets: xorshift64* draws, multiply-shift to a block index, as fsarena's uniform draw.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t state = 0x9e3779b97f4a7c15ULL;

static inline uint64_t next(void) {
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dULL;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE BS OPS\n", argv[0]);
		return 2;
	}
	size_t bs = strtoull(argv[2], NULL, 10);
	uint64_t ops = strtoull(argv[3], NULL, 10);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	uint64_t blocks = st.st_size / bs;
	char *buf;
	if (posix_memalign((void **)&buf, 4096, bs))
		return 1;
	struct timespec a, b, ca, cb;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t blk = (uint64_t)(((unsigned __int128)next() * blocks) >> 64);
		if (pread(fd, buf, bs, blk * bs) != (ssize_t)bs) {
			perror("pread");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	double cpu_ns = (cb.tv_sec - ca.tv_sec) * 1e9 + (cb.tv_nsec - ca.tv_nsec);
	printf("ns_per_op %.1f iops %.0f cpu_ns_per_op %.1f\n", ns / ops, ops / (ns / 1e9),
	       cpu_ns / ops);
	return 0;
}

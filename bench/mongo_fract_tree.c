/*
 * A reference model of reiser_fract_tree (Hans Reiser, 2000; LTP
 * testcases/kernel/fs/mongo/), written for fsarena's validation from the description in
 * fsarena's docs (REFERENCE.md §3.4), not copied. It uses glibc's own srand()/rand(), so
 * comparing its output with fsarena's generator checks fsarena's glibc random() and tree
 * logic. Fixed parameters as mongo.pl: max file 1000000, directories median 100 / max
 * 10000 files, branching median 0 / max 1, write buffer 4096.
 *
 *   mongo_fract_tree summary BYTES MEDIAN [SEED]   files bytes dirs depth fnv64
 *   mongo_fract_tree list    BYTES MEDIAN [SEED]   "path size" per file, creation order
 *   mongo_fract_tree create  BYTES MEDIAN DIR [SEED]  make the tree under DIR (as the
 *                                                     original: O_CREAT|O_EXCL, 4095-byte
 *                                                     writes of 'a')
 *
 * Build: gcc -O2 -o mongo_fract_tree mongo_fract_tree.c
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { LIST, SUMMARY, CREATE };
static int mode;
static unsigned long long fnv = 14695981039346656037ULL;
static long files_made, dirs_made, depth, max_depth, bytes_made;
static long file_no = 1, dir_no = 0;
static char path[1 << 15];
static char buf[4096];

/* The size function: m = median + 1, R = max / m, g = 2^20 if R < 1024 else 1,
   x = (rand() % (int)(g R)) / g, size = (int)(m (1 / (1 - x / R) - 1)). The final cast is
   the C cast of the original: out of range it yields INT_MIN on x86-64. */
static int size_fn(double median, double max)
{
	int r = rand();
	double m = median + 1, R = max / m;
	int g = R < 1024 ? 1024 * 1024 : 1;
	r %= (int)(g * R);
	double x = (double)r / g;
	return (int)(m * (1 / (1 - x / R) - 1));
}

static void emit(const char *rel, long size)
{
	char line[1 << 16];
	int n = snprintf(line, sizeof line, "%s %ld\n", rel, size);
	if (mode == LIST)
		fputs(line, stdout);
	for (int i = 0; i < n; i++)
		fnv = (fnv ^ (unsigned char)line[i]) * 1099511628211ULL;
}

static void make_file(const char *root, long size)
{
	char rel[1 << 16];
	snprintf(rel, sizeof rel, "%s%s%ld", path, *path ? "/" : "", file_no++);
	files_made++;
	bytes_made += size;
	emit(rel, size);
	if (mode != CREATE)
		return;
	char full[1 << 17];
	snprintf(full, sizeof full, "%s/%s", root, rel);
	int fd = open(full, O_CREAT | O_EXCL | O_RDWR, 0777);
	if (fd < 0) { perror(full); exit(1); }
	while (size > 0) {
		long n = write(fd, buf, size < (long)sizeof buf - 1 ? size : (long)sizeof buf - 1);
		if (n < 0) { perror(full); exit(1); }
		size -= n;
	}
	close(fd);
}

static void subtree(const char *root, long *first, long *last, long median_file)
{
	for (long n = *first; n > 0; n--)
		make_file(root, size_fn(median_file, 1000000));
	long branching = size_fn(0, 1) + 1;
	long *count = calloc(branching, sizeof *count);
	for (long *p = first + 1; p <= last; p++)
		count[rand() % branching]++;
	long *next = first + 1;
	for (long b = 0; b < branching; b++) {
		if (!count[b])
			continue;
		size_t len = strlen(path);
		sprintf(path + len, "%sd%ld", len ? "/" : "", dir_no++);
		dirs_made++;
		if (mode == CREATE) {
			char full[1 << 16];
			snprintf(full, sizeof full, "%s/%s", root, path);
			if (mkdir(full, 0755)) { perror(full); exit(1); }
		}
		if (++depth > max_depth)
			max_depth = depth;
		subtree(root, next, next + count[b] - 1, median_file);
		depth--;
		path[len] = 0;
		next += count[b];
	}
	free(count);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s summary|list BYTES MEDIAN [SEED] | create BYTES MEDIAN DIR [SEED]\n", argv[0]);
		return 2;
	}
	mode = !strcmp(argv[1], "list") ? LIST : !strcmp(argv[1], "create") ? CREATE : SUMMARY;
	long bytes = atol(argv[2]), median = atol(argv[3]);
	const char *root = mode == CREATE ? argv[4] : "";
	int seed_arg = mode == CREATE ? 5 : 4;
	unsigned seed = argc > seed_arg ? atoi(argv[seed_arg]) : 1;
	memset(buf, 'a', sizeof buf);

	/* Count: draw sizes until they reach BYTES; then restart the generator. */
	srand(seed);
	long nr = 0;
	for (long total = 0; total < bytes; nr++)
		total += size_fn(median, 1000000);
	srand(seed);
	/* Directory sizes: at least 1, at most the files left. */
	long *sizes = malloc((nr + 1) * sizeof *sizes), ndirs = 0;
	for (long left = nr; left > 0; left -= sizes[ndirs++]) {
		long s = size_fn(100, 10000);
		if (s == 0)
			s = 1;
		sizes[ndirs] = s < left ? s : left;
	}
	srand(seed);
	if (mode == CREATE && mkdir(root, 0755) && errno != EEXIST) { perror(root); return 1; }
	if (ndirs > 0)
		subtree(root, sizes, sizes + ndirs - 1, median);
	if (mode != LIST)
		printf("files %ld bytes %ld dirs %ld depth %ld fnv64 %016llx\n", files_made,
		       bytes_made, dirs_made, max_depth, fnv);
	return 0;
}

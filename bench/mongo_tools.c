/*
 * Stand-ins for Mongo's helpers (LTP testcases/kernel/fs/mongo/), written for fsarena's
 * validation from their description, not copied:
 *
 *   mongo_tools read FILE...   like mongo_read: open, read(2) 4096 bytes until a short
 *                              read, close; prints the bytes read
 *   mongo_tools slinks         like mongo_slinks: for each stdin line "TARGET LINK",
 *                              symlink(TARGET, LINK), lstat(LINK), readlink(LINK)
 *
 * Build: gcc -O2 -o mongo_tools mongo_tools.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int do_read(int n, char **files)
{
	static char buf[4096];
	long long total = 0;
	for (int i = 0; i < n; i++) {
		int fd = open(files[i], O_RDONLY);
		if (fd < 0) { perror(files[i]); return 1; }
		ssize_t got;
		while ((got = read(fd, buf, sizeof buf)) == (ssize_t)sizeof buf)
			total += got;
		if (got < 0) { perror(files[i]); return 1; }
		total += got;
		close(fd);
	}
	printf("%lld\n", total);
	return 0;
}

static int do_slinks(void)
{
	char *line = NULL, back[4096];
	size_t cap = 0;
	while (getline(&line, &cap, stdin) > 0) {
		char *target = strtok(line, " \t\n"), *link = strtok(NULL, " \t\n");
		if (!target || !link)
			break;
		struct stat st;
		if (symlink(target, link) || lstat(link, &st) || !S_ISLNK(st.st_mode)) {
			perror(link);
			return 1;
		}
		ssize_t n = readlink(link, back, sizeof back);
		if (n != (ssize_t)strlen(target) || memcmp(back, target, n)) {
			fprintf(stderr, "%s: reads back wrong\n", link);
			return 1;
		}
	}
	free(line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "read"))
		return do_read(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "slinks"))
		return do_slinks();
	fprintf(stderr, "usage: %s read FILE... | slinks < lines\n", argv[0]);
	return 2;
}

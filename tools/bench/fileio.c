/* fileio — file I/O throughput in a directory, after UnixBench's file
 * write/read/copy (fstime) and the thesis's "hard disk access":
 *   fileio --test write|read|copy|create --dir DIR [--size MIB] [--block KIB]
 *          [--duration SECONDS | --count OPERATIONS]
 * write: sequential writes of --block KiB (default 64) into DIR/fileio.a,
 *   starting over at --size MiB (default 16); fsync at every start over and
 *   at the end, inside the timed run. Score MB/s (MiB written per second).
 * read: DIR/fileio.a is written and fsync'd first (untimed), then read
 *   sequentially in blocks, starting over at its end; what the page cache
 *   holds is read from memory, as in fstime. Score MB/s.
 * copy: the same file is read block by block and written into DIR/fileio.b,
 *   fsync'd as write is. Score MB/s (MiB copied per second).
 * create: a 4 KiB file is created, written and closed, 100 at a time, then
 *   the 100 are unlinked and the directory fsync'd. Score files/s (one
 *   create and one delete each). --count counts blocks (files for create).
 * The files are removed at the end. */
#include "benchlib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH 100
#define SMALL_FILE 4096

static const char usage[] = "usage: fileio --test write|read|copy|create --dir DIR [--size MIB] [--block KIB]"
			    " [--duration SECONDS | --count N]";

struct io {
	int src, dst, dir;
	const char *dirname;
	char *buf;
	size_t block;
	off_t size, off;
	long long batch_files; /* create: files made in this batch */
};

static void sync_fd(int fd, const char *what)
{
	if (fsync(fd) < 0)
		bench_fail(what);
}

static void put(int fd, const char *buf, size_t len, off_t off)
{
	if (pwrite(fd, buf, len, off) != (ssize_t)len)
		bench_fail("write");
}

/* the next block's offset; past the end, start over (write side fsync'd) */
static off_t next_off(struct io *c, int synced)
{
	if (c->off + (off_t)c->block > c->size) {
		c->off = 0;
		if (synced >= 0)
			sync_fd(synced, "fsync");
	}
	off_t off = c->off;
	c->off += (off_t)c->block;
	return off;
}

static void do_write(void *ctx, long long n)
{
	struct io *c = ctx;
	for (long long i = 0; i < n; i++)
		put(c->dst, c->buf, c->block, next_off(c, c->dst));
}

static void do_read(void *ctx, long long n)
{
	struct io *c = ctx;
	for (long long i = 0; i < n; i++)
		if (pread(c->src, c->buf, c->block, next_off(c, -1)) != (ssize_t)c->block)
			bench_fail("read");
}

static void do_copy(void *ctx, long long n)
{
	struct io *c = ctx;
	for (long long i = 0; i < n; i++) {
		off_t off = next_off(c, c->dst);
		if (pread(c->src, c->buf, c->block, off) != (ssize_t)c->block)
			bench_fail("read");
		put(c->dst, c->buf, c->block, off);
	}
}

static void small_name(char *buf, size_t size, const struct io *c, long long i)
{
	snprintf(buf, size, "%s/fileio.s%lld", c->dirname, i);
}

static void delete_batch(struct io *c)
{
	char name[4200];
	for (long long i = 0; i < c->batch_files; i++) {
		small_name(name, sizeof(name), c, i);
		if (unlink(name) < 0)
			bench_fail("unlink");
	}
	c->batch_files = 0;
	sync_fd(c->dir, "fsync the directory");
}

static void do_create(void *ctx, long long n)
{
	struct io *c = ctx;
	char name[4200];

	for (long long i = 0; i < n; i++) {
		small_name(name, sizeof(name), c, c->batch_files);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			bench_fail("create");
		put(fd, c->buf, SMALL_FILE, 0);
		close(fd);
		if (++c->batch_files == BATCH)
			delete_batch(c);
	}
}

static int open_file(const char *dir, const char *name, int flags, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", dir, name);
	int fd = open(path, flags | O_CLOEXEC, 0600);
	if (fd < 0)
		bench_fail(path);
	return fd;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	const char *test = NULL, *dir = NULL;
	long long size_mib = 16, block_kib = 64, n;
	const struct bench_opt opts[] = {
		{ "--test", BENCH_OPT_STRING, &test },
		{ "--dir", BENCH_OPT_STRING, &dir },
		{ "--size", BENCH_OPT_LONG, &size_mib, 1, 65536 },
		{ "--block", BENCH_OPT_LONG, &block_kib, 1, 16384 },
		{ 0 },
	};
	struct io c = { .src = -1, .dst = -1 };
	char a_path[4200], b_path[4200];
	double secs;

	bench_init("fileio");
	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, opts, usage, argc, argv, 1);
	if (!test || (strcmp(test, "write") && strcmp(test, "read") && strcmp(test, "copy") && strcmp(test, "create")))
		bench_usage_error("--test", "must be write, read, copy or create");
	if (!dir)
		bench_usage_error("--dir", "missing (where the files go)");
	if (block_kib * 1024 > size_mib << 20)
		bench_usage_error("--block", "larger than --size");
	c.dirname = dir;
	c.block = (size_t)block_kib * 1024;
	c.size = (off_t)size_mib << 20;
	if (!(c.buf = malloc(c.block < SMALL_FILE ? SMALL_FILE : c.block)))
		bench_fail("malloc");
	memset(c.buf, 'q', c.block < SMALL_FILE ? SMALL_FILE : c.block);
	if ((c.dir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		bench_fail(dir);
	a_path[0] = b_path[0] = '\0';

	if (!strcmp(test, "create")) {
		n = bench_run(&a, do_create, &c, &secs);
		double t0 = bench_now();
		delete_batch(&c); /* the rest of the last batch belongs to the run */
		secs += bench_now() - t0;
		bench_report("file_create", n / secs, "files/s", secs, n, NULL, 0);
		return 0;
	}
	if (!strcmp(test, "write")) {
		c.dst = open_file(dir, "fileio.a", O_RDWR | O_CREAT | O_TRUNC, a_path, sizeof(a_path));
		n = bench_run(&a, do_write, &c, &secs);
	} else {
		/* the source, written and fsync'd before the timed run */
		c.src = open_file(dir, "fileio.a", O_RDWR | O_CREAT | O_TRUNC, a_path, sizeof(a_path));
		for (off_t off = 0; off + (off_t)c.block <= c.size; off += (off_t)c.block)
			put(c.src, c.buf, c.block, off);
		sync_fd(c.src, "fsync");
		if (!strcmp(test, "copy"))
			c.dst = open_file(dir, "fileio.b", O_RDWR | O_CREAT | O_TRUNC, b_path, sizeof(b_path));
		n = bench_run(&a, !strcmp(test, "read") ? do_read : do_copy, &c, &secs);
	}
	if (c.dst >= 0) {
		double t0 = bench_now();
		sync_fd(c.dst, "fsync");
		secs += bench_now() - t0;
	}
	unlink(a_path);
	if (b_path[0])
		unlink(b_path);
	char name[32];
	snprintf(name, sizeof(name), "file_%s", test);
	bench_report(name, (double)n * (double)c.block / (1 << 20) / secs, "MB/s", secs, n,
		     (struct bench_field[]){ { "block_kib", (double)block_kib, BENCH_INT },
					     { "size_mib", (double)size_mib, BENCH_INT } },
		     2);
	return 0;
}

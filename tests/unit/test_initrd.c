/* tests/unit/test_initrd.c — the microVM initramfs writer with extra trees
 * (runtime/vm/qemu/initrd.c) read back by a small newc parser: parents added,
 * modes/symlinks kept, devices and fifos skipped, /init written last so it
 * wins, bad destinations refused; and guest-init's module loader
 * (guest-init/modules.c) on everything but a real module: no list, blank
 * and comment lines, names escaping the dir, non-regular files, an oversized
 * list, a file that is not a module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest-init/modules.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

static char tmpl[] = "/tmp/qpod-test-initrd.XXXXXX";
static char *dir;
static int dfd;

static void put(const char *rel, const char *data)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_non_null(f = fopen(p, "we"));
	fputs(data, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	assert_int_equal(mkdir(p, 0750), 0);
}

struct entry {
	char name[128];
	unsigned mode, size, index;
	char data[64];
};

/* Parse the newc archive `name` in dir: up to 64 entries before the trailer. */
static int read_cpio(const char *name, struct entry *e, int max)
{
	char p[512], *buf;
	size_t len, off = 0;
	FILE *f;
	int n = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "re"));
	buf = malloc(4 << 20);
	len = fread(buf, 1, 4 << 20, f);
	fclose(f);
	for (;;) {
		char field[9] = "";
		unsigned v[13];

		assert_true(off + 110 <= len);
		assert_memory_equal(buf + off, "070701", 6);
		for (int i = 0; i < 13; i++) {
			memcpy(field, buf + off + 6 + 8 * i, 8);
			v[i] = (unsigned)strtoul(field, NULL, 16);
		}
		const char *nm = buf + off + 110;
		off = (off + 110 + v[11] + 3) & ~3u;
		if (!strcmp(nm, "TRAILER!!!"))
			break;
		assert_true(n < max);
		snprintf(e[n].name, sizeof(e[n].name), "%s", nm);
		e[n].mode = v[1];
		e[n].size = v[6];
		e[n].index = (unsigned)n;
		snprintf(e[n].data, sizeof(e[n].data), "%.*s", (int)(v[6] < 63 ? v[6] : 63), buf + off);
		off = (off + v[6] + 3) & ~3u;
		n++;
	}
	free(buf);
	return n;
}

static const struct entry *find(const struct entry *e, int n, const char *name)
{
	const struct entry *last = NULL;
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			last = &e[i];
	return last;
}

static void test_trees(void **state)
{
	struct entry e[64];
	char src[512], init[512];
	qp_error *err = NULL;
	int n;

	mk("mods");
	put("mods/a.ko", "AAAA");
	put("mods/modules.order", "a.ko\n");
	mk("root");
	mk("root/bin");
	put("root/bin/busybox", "BB");
	put("root/init", "not-the-init");
	snprintf(src, sizeof(src), "%s/root/bin/true", dir);
	assert_int_equal(symlink("busybox", src), 0);
	snprintf(src, sizeof(src), "%s/root/fifo", dir);
	assert_int_equal(mkfifo(src, 0600), 0);
	put("init-bin", "INIT");
	snprintf(init, sizeof(init), "%s/init-bin", dir);

	char mods[512], root[512];
	snprintf(mods, sizeof(mods), "%s/mods", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	struct vm_initrd_tree trees[] = { { mods, GI_MODULES_DIR + 1 }, { root, "" } };
	assert_int_equal(vm_write_initrd_trees(dfd, "i.cpio", init, trees, 2, &err), 0);
	n = read_cpio("i.cpio", e, 64);

	assert_non_null(find(e, n, "lib"));
	assert_true(S_ISDIR(find(e, n, "lib/modules")->mode));
	assert_string_equal(find(e, n, "lib/modules/a.ko")->data, "AAAA");
	assert_string_equal(find(e, n, "lib/modules/modules.order")->data, "a.ko\n");
	assert_true(S_ISLNK(find(e, n, "bin/true")->mode));
	assert_string_equal(find(e, n, "bin/true")->data, "busybox");
	assert_int_equal(find(e, n, "bin")->mode, S_IFDIR | 0750);
	assert_null(find(e, n, "fifo"));
	/* the tree's own "init" comes first; the last entry named init is guest-init */
	assert_string_equal(find(e, n, "init")->data, "INIT");
	assert_int_equal(find(e, n, "init")->mode, S_IFREG | 0755);
	assert_true(find(e, n, "init")->index > find(e, n, "bin/busybox")->index);

	/* no trees: the classic layout */
	assert_int_equal(vm_write_initrd(dfd, "j.cpio", init, &err), 0);
	n = read_cpio("j.cpio", e, 64);
	assert_int_equal(n, 7);
	assert_string_equal(e[6].name, "init");
}

static void test_trees_bad(void **state)
{
	static const char *const bad[] = { "/abs", "a/../b", "..", "a//b", "a/" };
	char init[512];
	qp_error *err = NULL;

	snprintf(init, sizeof(init), "%s/init-bin", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vm_initrd_tree t = { dir, bad[i] };
		assert_int_equal(vm_write_initrd_trees(dfd, "k.cpio", init, &t, 1, &err), -1);
		assert_int_equal(err->code, QP_E_INVALID);
		qp_error_free(&err);
	}
	struct vm_initrd_tree t = { "/nonexistent-qpod-dir", "x" };
	assert_int_equal(vm_write_initrd_trees(dfd, "k.cpio", init, &t, 1, &err), -1);
	assert_int_equal(err->errnum, ENOENT);
	assert_non_null(strstr(err->msg, "/nonexistent-qpod-dir"));
	qp_error_free(&err);
	assert_int_equal(faccessat(dfd, "k.cpio.tmp", F_OK, 0), -1); /* cleaned up */
}

static int load(const char *order)
{
	char p[512];
	qp_error *err = NULL;
	int r;

	snprintf(p, sizeof(p), "%s/lm", dir);
	if (order)
		put("lm/modules.order", order);
	r = gi_load_modules(p, &err);
	if (r < 0) {
		assert_non_null(err);
		assert_null(strchr(err->msg, '\n'));
		r = err->code == QP_E_INVALID ? -2 : -1;
	}
	qp_error_free(&err);
	return r;
}

static void test_modules(void **state)
{
	char p[512], big[5000];

	assert_int_equal(load(NULL), 0); /* no dir */
	mk("lm");
	assert_int_equal(load(NULL), 0); /* no list */
	assert_int_equal(load("\n# comment\n\n"), 0);
	assert_int_equal(load("../x.ko\n"), -2);
	assert_int_equal(load("a/b.ko\n"), -2);
	assert_int_equal(load("..\n"), -2);
	mk("lm/sub");
	assert_int_equal(load("sub\n"), -2); /* not a regular file */
	snprintf(p, sizeof(p), "%s/lm/link.ko", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(load("link.ko\n"), -1); /* O_NOFOLLOW: ELOOP */
	assert_int_equal(load("missing.ko\n"), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(load(big), -2); /* list over 4 KiB */
	/* not a module: the kernel refuses it (ENOEXEC, or EPERM/ENOSYS without
	 * module support), never a crash and never a success */
	put("lm/junk.ko", "this is not an ELF module");
	assert_int_equal(load("junk.ko\n"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_trees_bad),
		cmocka_unit_test(test_modules),
	};
	int r;

	if (!(dir = mkdtemp(tmpl)) || (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return perror("mkdtemp"), 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		r = r ? r : 1;
	return r;
}

/* tests/unit/test_lsm.c — AppArmor and SELinux settings (container/lsm.h)
 * against fake trees standing for "/": refused at create where the module is
 * not enabled, accepted where it is; the exec label written where each module
 * reads it (attr/apparmor/exec, else attr/exec); the mount context option;
 * and this host as it is (no AppArmor, no SELinux here: refused). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "container/lsm.h"

struct tree {
	char root[64];
};

static void put(const char *root, const char *rel, const char *text)
{
	char path[256], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *get(const char *root, const char *rel)
{
	static char buf[256];
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	strcpy(t->root, "/tmp/qpod-lsmtest.XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

static void expect_refused(const char *root, const struct pod_spec *s, const char *want)
{
	qp_error *err = NULL;

	assert_int_equal(qp_lsm_check_at(root, s, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	if (!strstr(err->msg, want))
		print_message("got \"%s\", want \"%s\"\n", err->msg, want);
	assert_non_null(strstr(err->msg, want));
	qp_error_free(&err);
}

static void test_check(void **state)
{
	struct tree *t = *state;
	struct pod_spec s = { 0 };
	qp_error *err = NULL;

	assert_int_equal(qp_lsm_check_at(t->root, &s, &err), 0); /* nothing asked */
	s.process.apparmor_profile = "docker-default";
	expect_refused(t->root, &s, "process.apparmorProfile \"docker-default\": AppArmor is not enabled");
	put(t->root, "sys/module/apparmor/parameters/enabled", "N\n");
	expect_refused(t->root, &s, "AppArmor is not enabled");
	put(t->root, "sys/module/apparmor/parameters/enabled", "Y\n");
	assert_int_equal(qp_lsm_check_at(t->root, &s, &err), 0);

	s.process.selinux_label = "system_u:system_r:container_t:s0:c1,c2";
	expect_refused(t->root, &s, "process.selinuxLabel \"system_u:system_r:container_t:s0:c1,c2\": SELinux is not enabled");
	s.process.selinux_label = NULL;
	s.mount_label = "system_u:object_r:container_file_t:s0";
	expect_refused(t->root, &s, "linux.mountLabel");
	put(t->root, "sys/fs/selinux/enforce", "1");
	assert_int_equal(qp_lsm_check_at(t->root, &s, &err), 0);
	s.mount_label = "a\"b";
	expect_refused(t->root, &s, "control characters and '\"' are not allowed");
	/* empty: none, also where no module is enabled */
	s.process.apparmor_profile = s.mount_label = "";
	assert_int_equal(qp_lsm_check_at("/nonexistent", &s, &err), 0);
}

static void test_this_host(void **state)
{
	struct pod_spec s = { 0 };
	qp_error *err = NULL;
	int apparmor = access("/sys/module/apparmor/parameters/enabled", F_OK) == 0;

	(void)state;
	s.process.apparmor_profile = "unconfined";
	if (!apparmor) {
		assert_int_equal(qp_lsm_check(&s, &err), -1);
		qp_error_free(&err);
	}
	s.process.apparmor_profile = NULL;
	s.mount_label = "system_u:object_r:container_file_t:s0";
	if (access("/sys/fs/selinux/enforce", F_OK) < 0) {
		assert_int_equal(qp_lsm_check(&s, &err), -1);
		qp_error_free(&err);
	}
}

static void test_apply(void **state)
{
	struct tree *t = *state;
	struct qp_process p = { 0 };
	qp_error *err = NULL;

	assert_int_equal(qp_lsm_apply_at(t->root, &p, &err), 0); /* nothing to write */
	put(t->root, "proc/self/attr/exec", "");
	p.apparmor_profile = "qpod-test";
	/* an old kernel: no attr/apparmor/, the shared attr/exec */
	assert_int_equal(qp_lsm_apply_at(t->root, &p, &err), 0);
	assert_string_equal(get(t->root, "proc/self/attr/exec"), "exec qpod-test");
	put(t->root, "proc/self/attr/apparmor/exec", "");
	put(t->root, "proc/self/attr/exec", "");
	assert_int_equal(qp_lsm_apply_at(t->root, &p, &err), 0);
	assert_string_equal(get(t->root, "proc/self/attr/apparmor/exec"), "exec qpod-test");
	assert_string_equal(get(t->root, "proc/self/attr/exec"), "");
	p.apparmor_profile = NULL;
	p.selinux_label = "system_u:system_r:container_t:s0";
	assert_int_equal(qp_lsm_apply_at(t->root, &p, &err), 0);
	assert_string_equal(get(t->root, "proc/self/attr/exec"), "system_u:system_r:container_t:s0");
}

static void test_mount_data(void **state)
{
	char data[64] = "mode=755";
	char small[16] = "";
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_lsm_mount_data(NULL, data, sizeof(data), &err), 0);
	assert_string_equal(data, "mode=755");
	assert_int_equal(qp_lsm_mount_data("u:r:t:s0:c1,c2", data, sizeof(data), &err), 0);
	assert_string_equal(data, "mode=755,context=\"u:r:t:s0:c1,c2\"");
	assert_int_equal(qp_lsm_mount_data("system_u:object_r:t:s0", small, sizeof(small), &err), -1);
	assert_non_null(strstr(err->msg, "too long"));
	qp_error_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test(test_this_host),
		cmocka_unit_test_setup_teardown(test_apply, setup, teardown),
		cmocka_unit_test(test_mount_data),
	};
	return cmocka_run_group_tests_name("lsm", tests, NULL, NULL);
}

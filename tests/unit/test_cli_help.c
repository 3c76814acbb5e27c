/* tests/unit/test_cli_help.c — every command's --help tells the truth about
 * what it parses: each long option in its getopt table is named in its help
 * text, each "--flag" its help names is in that table, the help starts with
 * "Usage: qpod NAME", exits 0, and `qpod help NAME` prints the same. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"

/* Run fn(argv) in a child with stdout on a pipe: the text and the status
 * (--help paths may exit(0) themselves). */
static char *capture(const struct qp_command *c, char **argv, int argc, int *status)
{
	int p[2];
	static char buf[65536];
	size_t len = 0;
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct qp_cli cli = { .root = "/nonexistent-qpod-root", .rootfd = -1 };
		qp_error *err = NULL;
		dup2(p[1], 1);
		close(p[0]);
		optind = 1;
		opterr = 0;
		int r = c->fn(&cli, argc, argv, &err);
		fflush(stdout);
		_exit(r < 0 ? 125 : r);
	}
	close(p[1]);
	while ((n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	buf[len] = '\0';
	assert_int_equal(waitpid(pid, status, 0), pid);
	return strdup(buf);
}

static bool names_flag(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--"))
		if (!strncmp(p + 2, name, n) && !(isalnum((unsigned char)p[2 + n]) || p[2 + n] == '-'))
			return true;
	return false;
}

static bool parses(const struct qp_command *c, const char *name, size_t n)
{
	if (n == 4 && !strncmp(name, "help", 4))
		return true;
	for (const struct option *o = c->opts; o && o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return true;
	return false;
}

static void help_matches_options(void **state)
{
	(void)state;
	for (const struct qp_command *c = qp_commands; c->name; c++) {
		char *argv[] = { (char *)c->name, "--help", NULL };
		char *hargv[] = { "help", (char *)c->name, NULL };
		char want[64];
		int st;
		char *text = capture(c, argv, 2, &st);

		print_message("# %s\n", c->name);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		snprintf(want, sizeof(want), "Usage: qpod %s", c->name);
		assert_memory_equal(text, want, strlen(want));
		/* every option parsed is named */
		for (const struct option *o = c->opts; o && o->name; o++) {
			if (!strcmp(o->name, "help"))
				continue;
			if (!names_flag(text, o->name))
				print_message("%s: --%s is parsed but not in its --help\n", c->name, o->name);
			assert_true(names_flag(text, o->name));
		}
		/* every option named is parsed (a "--" alone separates CMD) */
		for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
			size_t n = 0;
			while (isalnum((unsigned char)p[2 + n]) || p[2 + n] == '-')
				n++;
			if (n && !parses(c, p + 2, n))
				print_message("%s: --help names --%.*s, which it does not parse\n", c->name,
					      (int)n, p + 2);
			assert_true(!n || parses(c, p + 2, n));
		}
		/* `qpod help NAME` prints the same text */
		char *via_help = capture(cli_find_command("help"), hargv, 2, &st);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_string_equal(via_help, text);
		free(via_help);
		free(text);
	}
}

/* the top-level help lists every command */
static void usage_lists_every_command(void **state)
{
	char buf[16384] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	(void)state;
	assert_non_null(f);
	cli_usage(f);
	fclose(f);
	for (const struct qp_command *c = qp_commands; c->name; c++) {
		char line[64];
		snprintf(line, sizeof(line), "\n  %-10s %s", c->name, c->summary);
		line[sizeof(line) - 1] = '\0';
		assert_non_null(strstr(buf, line));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_matches_options),
		cmocka_unit_test(usage_lists_every_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

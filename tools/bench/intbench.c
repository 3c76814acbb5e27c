/* intbench — a Dhrystone-like integer workload, written for qpod after the
 * published structure of Dhrystone 2.1 (Weicker): one loop = the same mix
 * of record copies through pointers, 30-character string copy and compare,
 * enum switches, integer arithmetic, array stores and 8 procedure / 3
 * function calls as the original's main loop. Score: loops per second /
 * 1757 (the VAX 11/780's Dhrystones per second), labelled
 * "dhrystone-like DMIPS": it is not the reference source, so figures are
 * for comparing qpod runs, not for comparing with published Dhrystones.
 *
 * Keeping the work: every procedure is noipa (no inlining, cloning or
 * interprocedural constant propagation: as if compiled separately, which
 * Dhrystone requires), the state lives in globals the procedures change,
 * and the final state is checked against the values Dhrystone documents
 * (exit 1 if wrong), one of which counts every loop. */
#include "benchlib.h"

#include <stdio.h>
#include <string.h>

#define NOIPA __attribute__((noipa))
#define VAX_DHRYSTONES 1757.0

enum ident { ID_1, ID_2, ID_3, ID_4, ID_5 };

struct rec {
	struct rec *next;
	enum ident discr;
	enum ident kind;
	long num;
	char text[31];
};

/* the globals of the original, renamed */
struct rec *g_rec, *g_next_rec;
long g_int;
int g_bool;
char g_ch1, g_ch2;
long g_arr1[50];
long g_arr2[50][50];

NOIPA static int is_ident3(enum ident e)
{
	return e == ID_3;
}

NOIPA static void add_two(long a, long b, long *out)
{
	*out = b + a + 2;
}

NOIPA static enum ident compare_chars(char c1, char c2)
{
	char local = c1;
	if (local != c2)
		return ID_1;
	g_ch1 = local;
	return ID_2;
}

NOIPA static int compare_strings(const char *s1, const char *s2)
{
	long idx = 2;
	char ch = 0;

	while (idx <= 2)
		if (compare_chars(s1[idx], s2[idx + 1]) == ID_1) {
			ch = 'A';
			idx += 1;
		}
	if (ch >= 'W' && ch < 'Z')
		idx = 7;
	if (ch == 'R')
		return 1;
	if (strcmp(s1, s2) > 0) {
		idx += 7;
		g_int = idx;
		return 1;
	}
	return 0;
}

NOIPA static void pick_ident(enum ident in, enum ident *out)
{
	*out = in;
	if (!is_ident3(in))
		*out = ID_4;
	switch (in) {
	case ID_1:
		*out = ID_1;
		break;
	case ID_2:
		*out = g_int > 100 ? ID_1 : ID_4;
		break;
	case ID_3:
		*out = ID_2;
		break;
	case ID_4:
		break;
	case ID_5:
		*out = ID_3;
		break;
	}
}

NOIPA static void fill_arrays(long a1[50], long a2[50][50], long i1, long i2)
{
	long at = i1 + 5;

	a1[at] = i2;
	a1[at + 1] = a1[at];
	a1[at + 30] = at;
	for (long j = at; j <= at + 1; j++)
		a2[at][j] = at;
	a2[at][at - 1] += 1;
	a2[at + 20][at] = a1[at];
	g_int = 5;
}

NOIPA static void follow_next(struct rec **out)
{
	if (g_rec)
		*out = g_rec->next;
	add_two(10, g_int, &g_rec->num);
}

NOIPA static void update_record(struct rec *r)
{
	struct rec *next = r->next;

	*r->next = *g_rec;
	r->num = 5;
	next->num = r->num;
	next->next = r->next;
	follow_next(&next->next);
	if (next->discr == ID_1) {
		next->num = 6;
		pick_ident(r->kind, &next->kind);
		next->next = g_rec->next;
		add_two(next->num, 10, &next->num);
	} else {
		*r = *r->next;
	}
}

NOIPA static void count_down(long *io)
{
	long local = *io + 10;
	enum ident e = ID_2;

	do
		if (g_ch1 == 'A') {
			local -= 1;
			*io = local - g_int;
			e = ID_1;
		}
	while (e != ID_1);
}

NOIPA static void set_flags(void)
{
	int b = g_ch1 == 'A';
	g_bool = b | g_bool;
	g_ch2 = 'B';
}

NOIPA static void reset_flags(void)
{
	g_ch1 = 'A';
	g_bool = 0;
}

struct loop_state {
	char s1[31], s2[31];
	long i1, i2, i3, run;
	enum ident e;
};

/* n iterations of the main loop of the original */
static void dhry_loops(void *ctx, long long n)
{
	struct loop_state *st = ctx;

	for (long long k = 0; k < n; k++) {
		st->run++;
		reset_flags();
		set_flags();
		st->i1 = 2;
		st->i2 = 3;
		strcpy(st->s2, "DHRYSTONE PROGRAM, 2'ND STRING");
		st->e = ID_2;
		g_bool = !compare_strings(st->s1, st->s2);
		while (st->i1 < st->i2) {
			st->i3 = 5 * st->i1 - st->i2;
			add_two(st->i1, st->i2, &st->i3);
			st->i1 += 1;
		}
		fill_arrays(g_arr1, g_arr2, st->i1, st->i3);
		update_record(g_rec);
		for (char c = 'A'; c <= g_ch2; c++)
			if (st->e == compare_chars(c, 'C')) {
				pick_ident(ID_1, &st->e);
				strcpy(st->s2, "DHRYSTONE PROGRAM, 3'RD STRING");
				st->i2 = st->run;
				g_int = st->run;
			}
		st->i2 = st->i2 * st->i1;
		st->i1 = st->i2 / st->i3;
		st->i2 = 7 * (st->i2 - st->i3) - st->i1;
		count_down(&st->i1);
	}
}

/* The final values Dhrystone 2.1 documents; the array cell counts loops. */
static int state_ok(const struct loop_state *st)
{
	return g_int == 5 && g_bool == 1 && g_ch1 == 'A' && g_ch2 == 'B' && g_arr1[8] == 7 &&
	       g_arr2[8][7] == st->run + 10 && g_rec->discr == ID_1 && g_rec->kind == ID_3 &&
	       g_rec->num == 17 && g_next_rec->discr == ID_1 && g_next_rec->kind == ID_2 &&
	       g_next_rec->num == 18 && st->i1 == 5 && st->i2 == 13 && st->i3 == 7 &&
	       st->e == ID_2 && strcmp(st->s1, "DHRYSTONE PROGRAM, 1'ST STRING") == 0 &&
	       strcmp(st->s2, "DHRYSTONE PROGRAM, 2'ND STRING") == 0;
}

int main(int argc, char **argv)
{
	static struct rec rec_a, rec_b;
	static struct loop_state st;
	struct bench_args a;
	long long n;
	double secs, loops;

	bench_init("intbench");
	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, NULL,
		    "usage: intbench [--duration SECONDS | --count LOOPS]", argc, argv, 1);
	g_next_rec = &rec_b;
	g_rec = &rec_a;
	g_rec->next = g_next_rec;
	g_rec->discr = ID_1;
	g_rec->kind = ID_3;
	g_rec->num = 40;
	strcpy(g_rec->text, "DHRYSTONE PROGRAM, SOME STRING");
	strcpy(st.s1, "DHRYSTONE PROGRAM, 1'ST STRING");
	g_arr2[8][7] = 10;

	n = bench_run(&a, dhry_loops, &st, &secs);
	if (!state_ok(&st))
		bench_error("check", "final state differs from Dhrystone's documented values");
	loops = n / secs;
	bench_report("dhrystone-like", loops / VAX_DHRYSTONES, "dhrystone-like DMIPS", secs, n,
		     (struct bench_field[]){ { "loops_per_s", loops, BENCH_NUM } }, 1);
	return 0;
}

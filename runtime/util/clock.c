/* runtime/util/clock.c — see clock.h. */
#include <time.h>

#include "util/clock.h"

long long qp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long qp_now_ms(void)
{
	return qp_now_ns() / 1000000;
}

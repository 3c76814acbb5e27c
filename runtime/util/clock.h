/* runtime/util/clock.h — qpod's one clock: CLOCK_MONOTONIC in nanoseconds.
 * Every duration qpod measures or waits for (start timelines, timeouts,
 * benchmarks) reads this, so figures from different parts compare. */
#ifndef QPOD_CLOCK_H
#define QPOD_CLOCK_H

/* Nanoseconds of CLOCK_MONOTONIC. */
long long qp_now_ns(void);
/* The same in milliseconds. */
long long qp_now_ms(void);

#endif

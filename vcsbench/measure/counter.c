/* vcsbench's instruction counter: the rounds' bounds, told to callgrind.
 *
 * Loaded with ctypes by vcsbench/measure/instructions.py into a process that runs under
 * valgrind --tool=callgrind. Outside valgrind each request is a few instructions that do
 * nothing. vcsbench_spin executes a known number of instructions: 2 per turn (the
 * decrement and the branch), a known amount of work that tests and planted variants use. */
#include <valgrind/callgrind.h>

int vcsbench_under_valgrind(void) { return RUNNING_ON_VALGRIND; }

/* Instrumentation from here on, in a process started without it (--instr-atstart=no):
 * its interpreter's start and imports ran at valgrind's plain speed, uncounted. */
void vcsbench_instrument(void) { CALLGRIND_START_INSTRUMENTATION; }

/* The counts so far forgotten: what is counted next is the round's. */
void vcsbench_round_start(void) { CALLGRIND_ZERO_STATS; }

/* The round's counts written as a part of their own (one per round, in order). */
void vcsbench_round_end(void) { CALLGRIND_DUMP_STATS; }

void vcsbench_spin(unsigned long turns) {
#if defined(__x86_64__)
    __asm__ volatile(
        "test %0, %0\n\t"
        "jz 2f\n"
        "1:\n\t"
        "dec %0\n\t"
        "jnz 1b\n"
        "2:\n"
        : "+r"(turns)
        :
        : "cc");
#else
    for (volatile unsigned long left = turns; left; left--) {
    }
#endif
}

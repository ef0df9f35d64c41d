// A program that profiles itself: SIGPROF every millisecond of CPU time
// records the stack with backtrace(), as a native profiler would, while
// the program hashes numbers through two inlined functions. It prints its
// load bias (dlpi_addr of the main program) and every recorded stack.
#define _GNU_SOURCE
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

#define MAX_SAMPLES 400
#define MAX_DEPTH 32

static void *samples[MAX_SAMPLES][MAX_DEPTH];
static int depths[MAX_SAMPLES];
static volatile int nsamples;

static void on_prof(int sig) {
	(void)sig;
	int n = nsamples;
	if (n < MAX_SAMPLES) {
		depths[n] = backtrace(samples[n], MAX_DEPTH);
		nsamples = n + 1;
	}
}

static inline unsigned long mix(unsigned long x) {
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdUL; /* mix: multiply */
	x ^= x >> 29;
	return x;
}

static inline unsigned long checksum(const unsigned long *v, int n) {
	unsigned long acc = 0;
	for (int i = 0; i < n; i++)
		acc += mix(v[i] + acc); /* checksum: call mix */
	return acc;
}

__attribute__((noipa)) unsigned long work(int rounds) {
	unsigned long v[64];
	unsigned long total = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 64; i++)
			v[i] = (unsigned long)r * 64 + i;
		total += checksum(v, 64); /* work: call checksum */
	}
	return total;
}

__attribute__((noipa)) unsigned long run(int rounds) {
	return work(rounds) + 1; /* run: call work */
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	if (info->dlpi_name[0] == '\0') {
		*(unsigned long *)data = info->dlpi_addr;
		return 1;
	}
	return 0;
}

int main(void) {
	void *warm[4];
	backtrace(warm, 4); /* loads the unwinder before the first signal */
	signal(SIGPROF, on_prof);
	struct itimerval every = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_PROF, &every, NULL);
	unsigned long total = 0;
	while (nsamples < 200)
		total += run(2000); /* main: call run */
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);

	unsigned long bias = 0;
	dl_iterate_phdr(main_bias, &bias);
	printf("BIAS %lx\nTOTAL %lu\n", bias, total);
	for (int s = 0; s < nsamples; s++) {
		printf("SAMPLE");
		for (int d = 0; d < depths[s]; d++)
			printf(" %lx", (unsigned long)samples[s][d]);
		printf("\n");
	}
	return 0;
}

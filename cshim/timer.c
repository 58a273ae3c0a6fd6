/*
 * timer.c: the recorder's timers (docs/explanation/recorder.md, "Timers"): clock_gettime
 * variants, the TSC calibrated against CLOCK_MONOTONIC_RAW where it is
 * invariant, MPI_Wtime, and the injected clock error of GCLOCK_FAKE_CLOCK.
 *
 * Part of the C shim; compiled in the unity build pmpi/cshim.c after shim.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gclock.h"
#include "hotpath.h"
#include "shim.h"

/* ---- timers -------------------------------------------------------------- */

int64_t gclock_timer_raw(void) { return gclock_timer_raw_inline(); }

static int tsc_usable(void)
{
#if defined(__x86_64__)
	uint32_t a, b, c, d;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u));
	if (a < 0x80000007u)
		return 0;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u));
	return (d >> 8) & 1; /* invariant TSC */
#else
	return 0;
#endif
}

/* kernel_uses_tsc: the kernel's clocksource is the TSC, i.e. it found the
 * TSC stable and synchronised across CPUs (GCLOCK_TIMER=auto needs it). */
static int kernel_uses_tsc(void)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f == NULL)
		return 0;
	char buf[32] = {0};
	int ok = fgets(buf, sizeof buf, f) != NULL && strncmp(buf, "tsc", 3) == 0 &&
		 (buf[3] == '\n' || buf[3] == 0);
	fclose(f);
	return ok;
}

/* tsc_calibrate measures the TSC against CLOCK_MONOTONIC over 20 ms and
 * fills v = {ok, tsc0, ns0, mult, hz bits}: the TSC nanoseconds are
 * anchored to CLOCK_MONOTONIC at tsc0 so they start near it. */
static void tsc_calibrate(int64_t v[5])
{
	memset(v, 0, 5 * sizeof v[0]);
	if (!tsc_usable())
		return;
	int64_t m0 = gclock_clock(CLOCK_MONOTONIC);
	uint64_t c0 = gclock_rdtsc();
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	int64_t m1 = gclock_clock(CLOCK_MONOTONIC);
	uint64_t c1 = gclock_rdtsc();
	double hz = (double)(c1 - c0) / ((double)(m1 - m0) * 1e-9);
	if (!(hz > 1e6))
		return;
	uint64_t mult = (uint64_t)(1e9 / hz * 4294967296.0);
	v[0] = 1;
	memcpy(&v[1], &c1, sizeof c1);
	v[2] = m1;
	memcpy(&v[3], &mult, sizeof mult);
	memcpy(&v[4], &hz, sizeof hz);
}

/* timer_fast_update sets gclock_tsc_fast after the timer or the injection
 * changed (before recording starts, or in the tests' single thread). */
static void timer_fast_update(void)
{
	gclock_tsc_fast = gclock_timer_kind == GCK_TIMER_TSC && !gclock_fake_on;
}

int64_t gclock_now_slow(void) { return gclock_now_any(); }

/* gclock_timer_setup selects the timer; collective over all ranks (pmpi
 * calls it at the same point of start on every rank, with the same kind:
 * GCLOCK_TIMER=auto asks every rank for the TSC with need_kernel_tsc set,
 * so the machines' leaders decide). For the TSC, the lowest rank of each
 * machine calibrates once and every rank there uses the same conversion:
 * ranks on one machine then read one clock, which ClockPropSync assumes
 * (per-rank calibrations differed by about 0.5 ppm here, 0.5 µs per
 * second between ranks of one node that no sync epoch measures). */
int gclock_timer_setup(int kind, int need_kernel_tsc, uint64_t machine_key, double *tsc_hz)
{
	*tsc_hz = 0;
	if (kind == GCK_TIMER_TSC) {
		int64_t v[5];
		MPI_Comm local = h_null;
		int lrank = 0, rc = MPI_ERR_OTHER;
		/* One group per machine: by machine key (the kernel's boot id,
		 * which network and UTS namespaces share, so emulated hosts on one
		 * machine read one TSC conversion), else by shared memory. */
		if (ntcomm > 0 && machine_key != 0)
			rc = PMPI_Comm_split(tcomm[0], (int)(machine_key & 0x7fffffff), world_rank, &local);
		else if (ntcomm > 0)
			rc = PMPI_Comm_split_type(tcomm[0], MPI_COMM_TYPE_SHARED, world_rank, h_info_null, &local);
		if (rc == MPI_SUCCESS && local != h_null)
			PMPI_Comm_rank(local, &lrank);
		if (lrank == 0) {
			memset(v, 0, sizeof v);
			if (!need_kernel_tsc || kernel_uses_tsc())
				tsc_calibrate(v);
		}
		if (local != h_null) {
			if (PMPI_Bcast(v, 5, h_int64, 0, local) != MPI_SUCCESS)
				v[0] = 0;
			PMPI_Comm_free(&local);
		}
		if (!v[0] || !tsc_usable())
			return -1;
		uint64_t c1, mult;
		double hz;
		memcpy(&c1, &v[1], sizeof c1);
		memcpy(&mult, &v[3], sizeof mult);
		memcpy(&hz, &v[4], sizeof hz);
		gclock_tsc_mult = mult;
		gclock_tsc0 = c1;
		gclock_tsc_ns0 = v[2];
		*tsc_hz = hz;
	}
	if (kind < GCK_TIMER_MONOTONIC || kind > GCK_TIMER_MPI_WTIME)
		return -1;
	gclock_timer_kind = kind;
	timer_fast_update();
	return 0;
}

/* Non-linear injected terms (test mode only: the timer calls
 * gclock_fake_extra only when GCLOCK_FAKE_CLOCK has terms). The same
 * formulas as trace.FakeTerm.extra, which computes the truth. */
#define GCK_MAX_FAKE_TERMS 8
typedef struct {
	int kind;
	double a, b, c;
	double *off, *freq;
	int n;
} fake_term;
static fake_term fake_terms[GCK_MAX_FAKE_TERMS];
int gclock_fake_nl;
static int64_t fake_anchor;

void gclock_timer_fake_term(int kind, double a, double b, double c, const double *off, const double *freq, int n)
{
	if (gclock_fake_nl >= GCK_MAX_FAKE_TERMS)
		return;
	fake_term t = {kind, a, b, c, NULL, NULL, 0};
	if (kind == 3 && n > 0) {
		t.off = malloc((size_t)n * sizeof(double));
		t.freq = malloc((size_t)n * sizeof(double));
		if (t.off == NULL || t.freq == NULL)
			return;
		memcpy(t.off, off, (size_t)n * sizeof(double));
		memcpy(t.freq, freq, (size_t)n * sizeof(double));
		t.n = n;
	}
	fake_terms[gclock_fake_nl] = t;
	__atomic_store_n(&gclock_fake_nl, gclock_fake_nl + 1, __ATOMIC_RELEASE);
	gclock_fake_on = 1;
	timer_fast_update();
}

void gclock_timer_fake_anchor(int64_t anchor) { fake_anchor = anchor; }

double gclock_fake_extra(int64_t raw)
{
	double d = (double)(raw - fake_anchor), v = 0;
	for (int i = 0; i < gclock_fake_nl; i++) {
		const fake_term *t = &fake_terms[i];
		switch (t->kind) {
		case 1:
			if (d > t->a)
				v += t->b * 1e-6 * (d - t->a);
			break;
		case 2:
			v += t->a * sin(2 * M_PI / t->b * d + t->c);
			break;
		case 3:
			if (d > 0 && t->n > 0) {
				int k = (int)(d / t->a);
				if (k > t->n - 1)
					k = t->n - 1;
				v += t->off[k] + t->freq[k] * 1e-6 * (d - (double)k * t->a);
			}
			break;
		}
	}
	return v;
}

void gclock_timer_fake(double offset_ns, double drift_ppm)
{
	gclock_fake_off = (int64_t)offset_ns;
	gclock_fake_k = drift_ppm * 1e-6;
	gclock_fake_on = offset_ns != 0 || drift_ppm != 0;
	timer_fast_update();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* gclock_timer_cost_ns: median over 21 batches of the mean cost of one
 * timer read (batches of 1000). */
double gclock_timer_cost_ns(void)
{
	double v[21];
	for (int i = 0; i < 21; i++) {
		int64_t a = gclock_clock(CLOCK_MONOTONIC);
		volatile int64_t sink = 0;
		for (int j = 0; j < 1000; j++)
			sink += gclock_now();
		(void)sink;
		v[i] = (double)(gclock_clock(CLOCK_MONOTONIC) - a) / 1000.0;
	}
	qsort(v, 21, sizeof v[0], cmp_double);
	return v[10];
}

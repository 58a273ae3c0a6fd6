/*
 * Finding the MPI library wherever it is loaded (issue 11).
 *
 * The library never links libmpi. When the program links it, the weak
 * PMPI_* references of pmpi_gen.c are resolved by the dynamic linker at
 * load time. When libmpi arrives later by dlopen(RTLD_LOCAL) -- Python's
 * mpi4py, Julia, R, plug-in architectures -- its symbols are in no global
 * scope: the weak references stay NULL, while the application's calls still
 * reach our MPI_* wrappers (the preload comes first in the global scope).
 * Every PMPI_* call and predefined object therefore goes through a pointer
 * (pmpi_gen.h) that is looked up here the first time it is NULL.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "gclock.h"

/* Loaded objects that can hold MPI symbols: Open MPI (libmpi.so.40, its
 * Fortran layers libmpi_mpifh / libmpi_usempif08), MPICH and derivatives
 * (libmpich.so.12, libmpichfort, libmpifort, Intel's libmpi.so.12,
 * Cray's libmpi_cray / libmpich_*). */
static int mpi_object(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "libmpi", 6) == 0 || strncmp(base, "libpmpi", 7) == 0;
}

#define GCK_MAX_MPI_OBJS 16

typedef struct {
	char path[GCK_MAX_MPI_OBJS][512];
	int n;
} mpi_objs;

static int mpi_objs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	mpi_objs *o = data;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0' || !mpi_object(info->dlpi_name))
		return 0;
	if (o->n < GCK_MAX_MPI_OBJS) {
		snprintf(o->path[o->n], sizeof o->path[0], "%s", info->dlpi_name);
		o->n++;
	}
	return 0;
}

/* gclock_mpi_objects lists the loaded MPI objects (dl_iterate_phdr; no
 * dlopen inside the callback, which runs under the loader lock). */
static void gclock_mpi_objects(mpi_objs *o)
{
	o->n = 0;
	dl_iterate_phdr(mpi_objs_cb, o);
}

int gclock_mpi_loaded(char *name, int len)
{
	mpi_objs o;
	gclock_mpi_objects(&o);
	if (o.n > 0 && name != NULL && len > 0)
		snprintf(name, (size_t)len, "%s", o.path[0]);
	return o.n;
}

void *gclock_sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p != NULL)
		return p;
	mpi_objs o;
	gclock_mpi_objects(&o);
	for (int i = 0; i < o.n && p == NULL; i++) {
		void *h = dlopen(o.path[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h == NULL)
			continue;
		p = dlsym(h, name);
		dlclose(h); /* RTLD_NOLOAD took a reference; the object stays */
	}
	return p;
}

/* A PMPI function that no loaded library provides: the call fails with an
 * MPI error code instead of jumping to address 0. Called through a pointer
 * of another type; on the C ABIs we support the arguments are simply
 * ignored. */
static int missing_function(void) { return MPI_ERR_OTHER; }

/* A predefined object that cannot be found: a zeroed stand-in, so taking
 * its address never faults; recording stays off (after_init checks). */
static _Alignas(64) unsigned char missing_object[4096];

static int warned;

/* ---- never silent -----------------------------------------------------------
 * A program whose MPI calls bypass our wrappers (a binding we do not cover,
 * MPI_Init reached through PMPI_Init) would otherwise leave no trace and no
 * word. At exit, if an MPI library is loaded and MPI was initialised but no
 * MPI_Init wrapper ran, say so once. */

int gclock_init_seen; /* set by the MPI_Init wrappers */

static void unseen_init_check(void)
{
	if (gclock_init_seen || getenv("GCLOCK_DISABLE") != NULL)
		return;
	char name[512];
	if (gclock_mpi_loaded(name, sizeof name) == 0)
		return;
	int (*initialized)(int *) = (int (*)(int *))gclock_sym("PMPI_Initialized");
	int (*finalized)(int *) = (int (*)(int *))gclock_sym("PMPI_Finalized");
	int in = 0, fin = 0;
	if (initialized != NULL)
		initialized(&in);
	if (finalized != NULL)
		finalized(&fin);
	if (!in && !fin)
		return;
	const char *base = strrchr(name, '/');
	fprintf(stderr, "gclock: this process used MPI (%s) but the recorder never saw MPI_Init, so nothing "
			"was recorded: its MPI binding calls the library without going through MPI_Init "
			"(for example a binding gclock does not wrap); see docs/explanation/recorder.md\n",
		base ? base + 1 : name);
}

__attribute__((constructor)) static void unseen_init_register(void) { atexit(unseen_init_check); }

void *gclock_pmpi_resolve(void **slot, const char *name, int data)
{
	void *p = gclock_sym(name);
	if (p != NULL) {
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
		return p;
	}
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_ACQ_REL))
		fprintf(stderr, "gclock: %s not found in any loaded MPI library; recording disabled, "
				"that call fails with MPI_ERR_OTHER (the application is otherwise unchanged)\n", name);
	gclock_active = 0;
	if (data)
		return missing_object; /* slot stays NULL: after_init sees it */
	__atomic_store_n(slot, (void *)missing_function, __ATOMIC_RELEASE);
	return (void *)missing_function;
}

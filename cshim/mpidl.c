/* mpidl.c: see mpidl.h. Compiled into package mpirt (mpirt/cgo.go
 * includes it), never into the recorder. */
#define _GNU_SOURCE
#include "mpidl.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* MPI_THREAD_FUNNELED is 1 in both ABIs. */
#define GCK_THREAD_FUNNELED 1

/* Open MPI ABI: handles are pointers. */
typedef int (*p_init_thread)(int *, char ***, int, int *);
typedef int (*p_comm_int_ptr)(void *, int *);
typedef int (*p_send_ptr)(const void *, int, void *, int, int, void *);
typedef int (*p_recv_ptr)(void *, int, void *, int, int, void *, void *);
typedef int (*p_abort_ptr)(void *, int);
typedef int (*p_iprobe_ptr)(int, int, void *, int *, void *);
typedef int (*p_isend_ptr)(const void *, int, void *, int, int, void *, void **);
typedef int (*p_test_ptr)(void **, int *, void *);
/* MPICH ABI: handles are ints. */
typedef int (*p_comm_int_int)(int, int *);
typedef int (*p_send_int)(const void *, int, int, int, int, int);
typedef int (*p_recv_int)(void *, int, int, int, int, int, void *);
typedef int (*p_abort_int)(int, int);
typedef int (*p_iprobe_int)(int, int, int, int *, void *);
typedef int (*p_isend_int)(const void *, int, int, int, int, int, int *);
typedef int (*p_test_int)(int *, int *, void *);
typedef int (*p_void)(void);

static void *lib_handle;
static int is_ompi;
static void *f_init_thread, *f_rank, *f_size, *f_send, *f_recv, *f_iprobe, *f_isend, *f_test, *f_finalize, *f_abort;
/* the one outstanding gck_mpidl_isend: MPI_Request of either ABI */
static void *req_ptr;
static int req_int;
static void *o_world, *o_byte; /* Open MPI */

#define MPICH_COMM_WORLD 0x44000000
#define MPICH_BYTE 0x4c00010d
#define MPICH_STATUS_IGNORE ((void *)1)

static const char *env_lib(void)
{
	const char *l = getenv("GCLOCK_LIBMPI");
	if (l != NULL && l[0] != '\0')
		return l;
	if (getenv("OMPI_COMM_WORLD_SIZE") != NULL)
		return "libmpi.so.40";
	/* A PMIx launcher without a PMI-1/2 one (srun --mpi=pmix, prterun):
	 * Open MPI speaks PMIx; Debian's MPICH would start as a singleton. */
	if (getenv("PMIX_RANK") != NULL && getenv("PMI_FD") == NULL && getenv("PMI_SIZE") == NULL)
		return "libmpi.so.40";
	return NULL;
}

int gck_mpidl_open(const char *lib, char *err, size_t errlen)
{
	static const char *const cands[] = {"libmpich.so.12", "libmpi.so.12", "libmpi.so.40", NULL};
	if (lib == NULL || lib[0] == '\0')
		lib = env_lib();
	if (lib != NULL) {
		lib_handle = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
		if (lib_handle == NULL) {
			snprintf(err, errlen, "dlopen %s: %s", lib, dlerror());
			return -1;
		}
	} else {
		for (int i = 0; cands[i] != NULL && lib_handle == NULL; i++)
			lib_handle = dlopen(cands[i], RTLD_NOW | RTLD_GLOBAL);
		if (lib_handle == NULL) {
			snprintf(err, errlen, "no MPI library found (tried libmpich.so.12, libmpi.so.12, libmpi.so.40; set GCLOCK_LIBMPI)");
			return -1;
		}
	}
	f_init_thread = dlsym(lib_handle, "MPI_Init_thread");
	f_rank = dlsym(lib_handle, "MPI_Comm_rank");
	f_size = dlsym(lib_handle, "MPI_Comm_size");
	f_send = dlsym(lib_handle, "MPI_Send");
	f_recv = dlsym(lib_handle, "MPI_Recv");
	f_iprobe = dlsym(lib_handle, "MPI_Iprobe");
	f_isend = dlsym(lib_handle, "MPI_Isend");
	f_test = dlsym(lib_handle, "MPI_Test");
	f_finalize = dlsym(lib_handle, "MPI_Finalize");
	f_abort = dlsym(lib_handle, "MPI_Abort");
	if (!f_init_thread || !f_rank || !f_size || !f_send || !f_recv || !f_iprobe || !f_isend || !f_test || !f_finalize || !f_abort) {
		snprintf(err, errlen, "MPI library lacks MPI_Init_thread/Comm_rank/Comm_size/Send/Recv/Iprobe/Isend/Test/Finalize/Abort");
		return -1;
	}
	o_world = dlsym(lib_handle, "ompi_mpi_comm_world");
	o_byte = dlsym(lib_handle, "ompi_mpi_byte");
	is_ompi = o_world != NULL;
	if (is_ompi && o_byte == NULL) {
		snprintf(err, errlen, "Open MPI library without ompi_mpi_byte");
		return -1;
	}
	return 0;
}

const char *gck_mpidl_impl(void) { return is_ompi ? "openmpi" : "mpich"; }

int gck_mpidl_init(int *rank, int *size)
{
	int provided = 0;
	int rc = ((p_init_thread)f_init_thread)(NULL, NULL, GCK_THREAD_FUNNELED, &provided);
	if (rc != 0)
		return rc;
	if (is_ompi) {
		rc = ((p_comm_int_ptr)f_rank)(o_world, rank);
		if (rc == 0)
			rc = ((p_comm_int_ptr)f_size)(o_world, size);
	} else {
		rc = ((p_comm_int_int)f_rank)(MPICH_COMM_WORLD, rank);
		if (rc == 0)
			rc = ((p_comm_int_int)f_size)(MPICH_COMM_WORLD, size);
	}
	return rc;
}

int gck_mpidl_send(const void *buf, int n, int dest, int tag)
{
	if (is_ompi)
		return ((p_send_ptr)f_send)(buf, n, o_byte, dest, tag, o_world);
	return ((p_send_int)f_send)(buf, n, MPICH_BYTE, dest, tag, MPICH_COMM_WORLD);
}

int gck_mpidl_recv(void *buf, int n, int src, int tag)
{
	if (is_ompi)
		return ((p_recv_ptr)f_recv)(buf, n, o_byte, src, tag, o_world, NULL);
	return ((p_recv_int)f_recv)(buf, n, MPICH_BYTE, src, tag, MPICH_COMM_WORLD, MPICH_STATUS_IGNORE);
}

int gck_mpidl_iprobe(int src, int tag, int *flag)
{
	if (is_ompi)
		return ((p_iprobe_ptr)f_iprobe)(src, tag, o_world, flag, NULL);
	return ((p_iprobe_int)f_iprobe)(src, tag, MPICH_COMM_WORLD, flag, MPICH_STATUS_IGNORE);
}

int gck_mpidl_isend(const void *buf, int n, int dest, int tag)
{
	if (is_ompi)
		return ((p_isend_ptr)f_isend)(buf, n, o_byte, dest, tag, o_world, &req_ptr);
	return ((p_isend_int)f_isend)(buf, n, MPICH_BYTE, dest, tag, MPICH_COMM_WORLD, &req_int);
}

int gck_mpidl_test(int *flag)
{
	if (is_ompi)
		return ((p_test_ptr)f_test)(&req_ptr, flag, NULL);
	return ((p_test_int)f_test)(&req_int, flag, MPICH_STATUS_IGNORE);
}

int gck_mpidl_finalize(void) { return ((p_void)f_finalize)(); }

int gck_mpidl_abort(int code)
{
	if (is_ompi)
		return ((p_abort_ptr)f_abort)(o_world, code);
	return ((p_abort_int)f_abort)(MPICH_COMM_WORLD, code);
}

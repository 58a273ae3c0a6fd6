/*
 * goside.c: what the Go side (pmpi/) calls: PMPI helpers for its own traffic
 * (clock sync, resync, the trace header's exchange) on its own
 * communicators, and the objects loaded in the process (for call sites).
 *
 * Part of the C shim; compiled in the unity build pmpi/cshim.c after lifecycle.c.
 */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclock.h"
#include "hotpath.h"
#include "goside.h"
#include "shim.h"

/* ---- PMPI helpers for Go's own traffic ------------------------------------ */

#define GCK_TAG 0x6c6b /* "lk" */

static MPI_Comm tc_get(int tc)
{
	if (tc < 0 || tc >= ntcomm)
		return h_null;
	return tcomm[tc];
}

int gclock_world_rank(void) { return world_rank; }
int gclock_world_size(void) { return world_size; }

/* gclock_spawned is 1 in a process started by MPI_Comm_spawn(_multiple):
 * it has a parent intercommunicator, and its job's rank files must not
 * replace those of the job that spawned it (pmpi's start). */
int gclock_spawned(void)
{
	MPI_Comm parent = h_null;
	if (PMPI_Comm_get_parent(&parent) != MPI_SUCCESS)
		return 0;
	return parent != h_null;
}

int gclock_t_rank(int tc)
{
	int r = -1;
	PMPI_Comm_rank(tc_get(tc), &r);
	return r;
}

int gclock_t_size(int tc)
{
	int n = 0;
	PMPI_Comm_size(tc_get(tc), &n);
	return n;
}

int gclock_t_send(int tc, const double *v, int n, int dst, int sync)
{
	if (sync)
		return PMPI_Ssend(v, n, h_double, dst, GCK_TAG, tc_get(tc));
	return PMPI_Send(v, n, h_double, dst, GCK_TAG, tc_get(tc));
}

int gclock_t_recv(int tc, double *v, int n, int src)
{
	return PMPI_Recv(v, n, h_double, src, GCK_TAG, tc_get(tc), MPI_STATUS_IGNORE);
}

int gclock_t_bcast(int tc, void *buf, int64_t n, int root)
{
	if (n < 0 || n > 0x7fffffff)
		return MPI_ERR_COUNT;
	return PMPI_Bcast(buf, (int)n, h_byte, root, tc_get(tc));
}

int gclock_t_bcast_i64(int tc, int64_t *v, int root)
{
	return PMPI_Bcast(v, 1, h_int64, root, tc_get(tc));
}

int gclock_t_split(int tc, int color, int key, int *newtc)
{
	*newtc = -1;
	MPI_Comm nc;
	int rc = PMPI_Comm_split(tc_get(tc), color < 0 ? MPI_UNDEFINED : color, key, &nc);
	if (rc != MPI_SUCCESS || nc == h_null)
		return rc;
	if (ntcomm >= GCK_MAX_TCOMM) {
		PMPI_Comm_free(&nc);
		return MPI_ERR_NO_MEM;
	}
	tcomm[ntcomm] = nc;
	*newtc = ntcomm++;
	return MPI_SUCCESS;
}

int gclock_t_barrier(int tc) { return PMPI_Barrier(tc_get(tc)); }

/* gclock_node_shared: node index = order of the shared-memory leaders (the
 * lowest world rank of each MPI_COMM_TYPE_SHARED group). machine_key names
 * the physical machine (a hash of the kernel's boot id, which network and UTS
 * namespaces share; 0 = unknown); *machine_ranks counts the world ranks with
 * this rank's key, or is the node size when the key is unknown. */
int gclock_node_shared(int *node_id, int *node_size, uint64_t machine_key,
		       int *machine_ranks)
{
	MPI_Comm local;
	*node_id = 0;
	*node_size = 1;
	*machine_ranks = 1;
	int rc = PMPI_Comm_split_type(tcomm[0], MPI_COMM_TYPE_SHARED, world_rank,
				      h_info_null, &local);
	if (rc != MPI_SUCCESS)
		return rc;
	int lrank = 0, lsize = 1, leader = world_rank;
	PMPI_Comm_rank(local, &lrank);
	PMPI_Comm_size(local, &lsize);
	PMPI_Bcast(&leader, 1, h_int, 0, local);
	PMPI_Comm_free(&local);
	int *all = malloc(sizeof(int) * 3 * (size_t)world_size);
	if (all == NULL)
		return MPI_ERR_NO_MEM;
	int mine[3] = {lrank, (int)(uint32_t)(machine_key >> 32), (int)(uint32_t)machine_key};
	rc = PMPI_Allgather(mine, 3, h_int, all, 3, h_int, tcomm[0]);
	if (rc == MPI_SUCCESS) {
		int id = 0, same = 0;
		for (int r = 0; r < leader && r < world_size; r++)
			if (all[3 * r] == 0)
				id++;
		for (int r = 0; r < world_size; r++)
			if (all[3 * r + 1] == mine[1] && all[3 * r + 2] == mine[2])
				same++;
		*node_id = id;
		*node_size = lsize;
		*machine_ranks = machine_key != 0 ? same : lsize;
	}
	free(all);
	return rc;
}

void gclock_mpi_library_version(char *buf, int len)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	buf[0] = '\0';
	if (PMPI_Get_library_version(v, &n) != MPI_SUCCESS)
		return;
	v[n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
	size_t line = strcspn(v, "\n");
	if ((int)line >= len)
		line = (size_t)len - 1;
	memcpy(buf, v, line);
	buf[line] = '\0';
}

/* ---- loaded objects -------------------------------------------------------- */

struct objs_ctx {
	gclock_object *out;
	int max, n;
};

static void build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *ph,
		     gclock_object *o)
{
	const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
	const char *end = p + ph->p_memsz;
	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
		size_t nsz = (nh->n_namesz + 3) & ~(size_t)3;
		size_t dsz = (nh->n_descsz + 3) & ~(size_t)3;
		const char *name = p + sizeof *nh;
		const char *desc = name + nsz;
		if (desc + dsz > end)
			return;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof o->build_id) {
			memcpy(o->build_id, desc, nh->n_descsz);
			o->build_id_len = (int)nh->n_descsz;
			return;
		}
		p = desc + dsz;
	}
}

static int objs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct objs_ctx *c = data;
	if (c->n >= c->max)
		return 1;
	gclock_object *o = &c->out[c->n];
	memset(o, 0, sizeof *o);
	const char *name = info->dlpi_name;
	if (name == NULL || name[0] == '\0') {
		if (c->n == 0) {
			ssize_t k = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
			if (k > 0)
				o->path[k] = '\0';
		}
	} else {
		snprintf(o->path, sizeof o->path, "%s", name);
	}
	o->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			uint64_t lo = info->dlpi_addr + ph->p_vaddr;
			uint64_t hi = lo + ph->p_memsz;
			if (o->lo == 0 || lo < o->lo)
				o->lo = lo;
			if (hi > o->hi)
				o->hi = hi;
		} else if (ph->p_type == PT_NOTE && o->build_id_len == 0) {
			build_id(info, ph, o);
		}
	}
	if (o->path[0] == '\0' || o->hi == 0)
		return 0; /* vdso without a path, or nothing executable */
	c->n++;
	return 0;
}

int gclock_objects(gclock_object *out, int max)
{
	struct objs_ctx c = {out, max, 0};
	dl_iterate_phdr(objs_cb, &c);
	return c.n;
}

/* gclock_deactivate stops recording (Go, after a write failed). */
void gclock_deactivate(void) { gclock_active = 0; }

int64_t gclock_now_ext(void) { return gclock_now(); }

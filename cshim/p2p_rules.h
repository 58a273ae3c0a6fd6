/*
 * The recording rules of the point-to-point, request and nonblocking-
 * collective wrappers (docs/explanation/p2p.md): one gclock_p2p_<rule>_pre and
 * gclock_p2p_<rule>_post per rule name of cshim/p2p.tbl, which the
 * generated wrappers (wrappers_gen.c, fortran_gen.c) call before and after
 * their PMPI function. Hot path: no Go call, no allocation, no lock, no
 * system call beyond the timer.
 *
 * This header declares; the definitions are in p2p_rules.c (static inline
 * functions, compiled in the one translation unit cshim/libgclock.c;
 * docs/explanation/cshim.md).
 */
#ifndef GCK_P2P_RULES_H
#define GCK_P2P_RULES_H

#include "requests.h"

/* send(count, datatype, dest, tag, comm): MPI_Send, Ssend, Rsend, Bsend */
static GCK_INLINE void gclock_p2p_send_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
				       int dest, int tag, MPI_Comm comm);

static inline void gclock_p2p_send_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					int dest, int tag, MPI_Comm comm);

/* recv(count, datatype, source, tag, comm, status) */
static inline void gclock_p2p_recv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
				       int source, int tag, MPI_Comm comm, MPI_Status *status);

static inline void gclock_p2p_recv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					int source, int tag, MPI_Comm comm, MPI_Status *status);

/* sendrecv(sendcount, sendtype, dest, sendtag, recvcount, recvtype, source,
 * recvtag, comm, status): event 0 the send half, event 1 the receive half. */
static inline void gclock_p2p_sendrecv_pre(gclock_p2p *cx, MPI_Count scount, MPI_Datatype stype,
					   int dest, int stag, MPI_Count rcount, MPI_Datatype rtype,
					   int source, int rtag, MPI_Comm comm,
					   MPI_Status *status);

static inline void gclock_p2p_sendrecv_post(gclock_p2p *cx, int rc, MPI_Count scount,
					    MPI_Datatype stype, int dest, int stag,
					    MPI_Count rcount, MPI_Datatype rtype, int source,
					    int rtag, MPI_Comm comm, MPI_Status *status);

/* sendrecv_replace(count, datatype, dest, sendtag, source, recvtag, comm, status) */
static inline void gclock_p2p_sendrecv_replace_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
						   int dest, int stag, int source, int rtag,
						   MPI_Comm comm, MPI_Status *status);

static inline void gclock_p2p_sendrecv_replace_post(gclock_p2p *cx, int rc, MPI_Count count,
						    MPI_Datatype type, int dest, int stag,
						    int source, int rtag, MPI_Comm comm,
						    MPI_Status *status);

/* probe(source, tag, comm, status): Recv = size of the message found. */
static inline void gclock_p2p_probe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					MPI_Status *status);

static inline void gclock_p2p_probe_post(gclock_p2p *cx, int rc, int source, int tag,
					 MPI_Comm comm, MPI_Status *status);

/* iprobe(source, tag, comm, flag, status): recorded when a message is
 * found, else counted as a poll. */
static inline void gclock_p2p_iprobe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					 int *flag, MPI_Status *status);

static inline void gclock_p2p_iprobe_post(gclock_p2p *cx, int rc, int source, int tag,
					  MPI_Comm comm, int *flag, MPI_Status *status);

/* mprobe(source, tag, comm, message, status): recorded like MPI_Probe;
 * the message is kept for its receive. */
static inline void gclock_p2p_mprobe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					 MPI_Message *message, MPI_Status *status);

static inline void gclock_p2p_mprobe_post(gclock_p2p *cx, int rc, int source, int tag,
					  MPI_Comm comm, MPI_Message *message, MPI_Status *status);

/* improbe(source, tag, comm, flag, message, status): like MPI_Iprobe. */
static inline void gclock_p2p_improbe_pre(gclock_p2p *cx, int source, int tag, MPI_Comm comm,
					  int *flag, MPI_Message *message, MPI_Status *status);

static inline void gclock_p2p_improbe_post(gclock_p2p *cx, int rc, int source, int tag,
					   MPI_Comm comm, int *flag, MPI_Message *message,
					   MPI_Status *status);

/* mrecv(count, datatype, message, status): recorded like MPI_Recv on the
 * probed message's communicator. */

static inline void gclock_p2p_mrecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					MPI_Message *message, MPI_Status *status);

static inline void gclock_p2p_mrecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 MPI_Message *message, MPI_Status *status);

/* imrecv(count, datatype, message, request): recorded like MPI_Irecv of
 * the probed message's source and tag. */
static inline void gclock_p2p_imrecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					 MPI_Message *message, MPI_Request *request);

static inline void gclock_p2p_imrecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					  MPI_Message *message, MPI_Request *request);

static GCK_INLINE void gclock_p2p_isend_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int dest,
					int tag, MPI_Comm comm, MPI_Request *request);

static GCK_INLINE void gclock_p2p_isend_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 int dest, int tag, MPI_Comm comm, MPI_Request *request);

static GCK_INLINE void gclock_p2p_irecv_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type, int source,
					int tag, MPI_Comm comm, MPI_Request *request);

static GCK_INLINE void gclock_p2p_irecv_post(gclock_p2p *cx, int rc, MPI_Count count, MPI_Datatype type,
					 int source, int tag, MPI_Comm comm, MPI_Request *request);

static inline void gclock_p2p_send_init_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					    int dest, int tag, MPI_Comm comm,
					    MPI_Request *request);

static inline void gclock_p2p_send_init_post(gclock_p2p *cx, int rc, MPI_Count count,
					     MPI_Datatype type, int dest, int tag,
					     MPI_Comm comm, MPI_Request *request);

static inline void gclock_p2p_recv_init_pre(gclock_p2p *cx, MPI_Count count, MPI_Datatype type,
					    int source, int tag, MPI_Comm comm,
					    MPI_Request *request);

static inline void gclock_p2p_recv_init_post(gclock_p2p *cx, int rc, MPI_Count count,
					     MPI_Datatype type, int source, int tag,
					     MPI_Comm comm, MPI_Request *request);

/* start(request) */
static inline void gclock_p2p_start_pre(gclock_p2p *cx, MPI_Request *request);

static inline void gclock_p2p_start_post(gclock_p2p *cx, int rc, MPI_Request *request);

/* startall(count, array_of_requests) */
static inline void gclock_p2p_startall_pre(gclock_p2p *cx, int count, MPI_Request reqs[]);

static inline void gclock_p2p_startall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[]);

/* request_free(request): the request ends without a completion call. */
static inline void gclock_p2p_request_free_pre(gclock_p2p *cx, MPI_Request *request);

static inline void gclock_p2p_request_free_post(gclock_p2p *cx, int rc, MPI_Request *request);

/* wait(request, status) */
static inline void gclock_p2p_wait_pre(gclock_p2p *cx, MPI_Request *request, MPI_Status *status);

static inline void gclock_p2p_wait_post(gclock_p2p *cx, int rc, MPI_Request *request,
					MPI_Status *status);

/* test(request, flag, status) */
static inline void gclock_p2p_test_pre(gclock_p2p *cx, MPI_Request *request, int *flag,
				       MPI_Status *status);

static inline void gclock_p2p_test_post(gclock_p2p *cx, int rc, MPI_Request *request, int *flag,
					MPI_Status *status);

/* gclock_complete_all: every copied request of a Waitall/Testall. */

/* waitall(count, array_of_requests, array_of_statuses) */
static GCK_INLINE void gclock_p2p_waitall_pre(gclock_p2p *cx, int count, MPI_Request reqs[],
					  MPI_Status *statuses);

static GCK_INLINE void gclock_p2p_waitall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   MPI_Status *statuses);

/* testall(count, array_of_requests, flag, array_of_statuses) */
static inline void gclock_p2p_testall_pre(gclock_p2p *cx, int count, MPI_Request reqs[], int *flag,
					  MPI_Status *statuses);

static inline void gclock_p2p_testall_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   int *flag, MPI_Status *statuses);

/* waitany(count, array_of_requests, index, status) */
static inline void gclock_p2p_waitany_pre(gclock_p2p *cx, int count, MPI_Request reqs[], int *index,
					  MPI_Status *status);

static inline void gclock_p2p_waitany_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   int *index, MPI_Status *status);

/* testany(count, array_of_requests, index, flag, status) */
static inline void gclock_p2p_testany_pre(gclock_p2p *cx, int count, MPI_Request reqs[], int *index,
					  int *flag, MPI_Status *status);

static inline void gclock_p2p_testany_post(gclock_p2p *cx, int rc, int count, MPI_Request reqs[],
					   int *index, int *flag, MPI_Status *status);

/* waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) */
static inline void gclock_p2p_waitsome_pre(gclock_p2p *cx, int incount, MPI_Request reqs[],
					   int *outcount, int indices[], MPI_Status *statuses);

static inline void gclock_p2p_waitsome_post(gclock_p2p *cx, int rc, int incount, MPI_Request reqs[],
					    int *outcount, int indices[], MPI_Status *statuses);

/* testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) */
static inline void gclock_p2p_testsome_pre(gclock_p2p *cx, int incount, MPI_Request reqs[],
					   int *outcount, int indices[], MPI_Status *statuses);

static inline void gclock_p2p_testsome_post(gclock_p2p *cx, int rc, int incount, MPI_Request reqs[],
					    int *outcount, int indices[], MPI_Status *statuses);

/* Nonblocking collectives (rule icoll_<byte rule>): the start takes the
 * communicator's next collective sequence number, exactly like a blocking
 * collective, and its request enters the table. */
static inline void gclock_p2p_icoll_pre(gclock_p2p *cx, MPI_Comm comm);

static inline void gclock_p2p_icoll_post(gclock_p2p *cx, int rc, int32_t root, MPI_Request *request);

#endif

/*
 * Communicator constructors (tests/topo_test.go, issue 11 §4) on 4 ranks:
 * every constructor the recorder wraps makes a communicator on which one
 * collective runs, so each must have an id all its members agree on:
 * MPI_Cart_create (2x2, periodic) and MPI_Cart_sub (rows), MPI_Graph_create
 * and MPI_Dist_graph_create(_adjacent) (rings), MPI_Comm_idup,
 * MPI_Comm_create_group (even ranks), MPI_Intercomm_create between the
 * even and odd halves and MPI_Intercomm_merge of it. Then the
 * neighbourhood collectives: MPI_Neighbor_allgather and an
 * MPI_Ineighbor_allgather on the 2x2 torus (4 neighbours), MPI_Neighbor_
 * allgatherv on the graph (2), MPI_Neighbor_alltoall(v,w) and _Ineighbor_alltoallw on the
 * distributed graphs (1 in, 1 out). Rank 0 prints one deterministic line
 * per result.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 4) {
		if (rank == 0)
			fprintf(stderr, "topo: needs 4 ranks, got %d\n", np);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int right = (rank + 1) % np, left = (rank + np - 1) % np;
	int res[8] = {0};

	int dims[2] = {2, 2}, periods[2] = {1, 1};
	MPI_Comm cart, row;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Allreduce(&rank, &res[0], 1, MPI_INT, MPI_SUM, cart);
	int remain[2] = {0, 1};
	MPI_Cart_sub(cart, remain, &row);
	MPI_Allreduce(&rank, &res[1], 1, MPI_INT, MPI_SUM, row);

	int index[4] = {2, 4, 6, 8}, edges[8] = {1, 3, 0, 2, 1, 3, 0, 2};
	MPI_Comm graph;
	MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
	MPI_Allreduce(&rank, &res[2], 1, MPI_INT, MPI_MAX, graph);

	MPI_Comm dga, dg;
	/* weights given (Open MPI's MPI_UNWEIGHTED trips GCC's -Wstringop-overread) */
	int w = 1, one = 1;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &w, 1, &right, &w, MPI_INFO_NULL, 0, &dga);
	MPI_Barrier(dga);
	MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &right, &w, MPI_INFO_NULL, 0, &dg);
	MPI_Allreduce(&rank, &res[3], 1, MPI_INT, MPI_MIN, dg);

	MPI_Comm dup;
	MPI_Request req;
	MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Allreduce(&rank, &res[4], 1, MPI_INT, MPI_SUM, dup);

	MPI_Group world_group, even_group;
	MPI_Comm_group(MPI_COMM_WORLD, &world_group);
	int evens[2] = {0, 2};
	MPI_Group_incl(world_group, 2, evens, &even_group);
	MPI_Comm even = MPI_COMM_NULL;
	if (rank % 2 == 0) {
		MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 7, &even);
		MPI_Allreduce(&rank, &res[5], 1, MPI_INT, MPI_SUM, even);
	}
	MPI_Bcast(&res[5], 1, MPI_INT, 0, MPI_COMM_WORLD);

	MPI_Comm half, inter, merged;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 9, &inter);
	MPI_Intercomm_merge(inter, rank % 2, &merged);
	int mrank;
	MPI_Comm_rank(merged, &mrank);
	MPI_Allreduce(&mrank, &res[6], 1, MPI_INT, MPI_SUM, merged);

	int nb[4] = {0}, one4[4] = {1, 1, 1, 1}, disp[4] = {0, 1, 2, 3}, nx = 0;
	MPI_Neighbor_allgather(&rank, 1, MPI_INT, nb, 1, MPI_INT, cart);
	res[7] = nb[0] + nb[1] + nb[2] + nb[3];
	MPI_Request nreq;
	MPI_Ineighbor_allgather(&rank, 1, MPI_INT, nb, 1, MPI_INT, cart, &nreq);
	MPI_Wait(&nreq, MPI_STATUS_IGNORE);
	res[7] += nb[0];
	MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, nb, one4, disp, MPI_INT, graph);
	res[7] += nb[0] + nb[1];
	MPI_Neighbor_alltoall(&rank, 1, MPI_INT, &nx, 1, MPI_INT, dga);
	res[7] += nx;
	MPI_Neighbor_alltoallv(&rank, one4, disp, MPI_INT, &nx, one4, disp, MPI_INT, dg);
	res[7] += nx;
	/* per-neighbour datatypes: 4 ints on the torus, a double on the ring */
	int w4[4] = {rank, rank + 10, rank + 20, rank + 30};
	MPI_Aint bd[4] = {0, sizeof(int), 2 * sizeof(int), 3 * sizeof(int)}, zero = 0;
	MPI_Datatype t4[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT}, td = MPI_DOUBLE;
	MPI_Neighbor_alltoallw(w4, one4, bd, t4, nb, one4, bd, t4, cart);
	res[7] += nb[0] + nb[1] + nb[2] + nb[3];
	double dx = rank + 0.5, dy = 0;
	MPI_Ineighbor_alltoallw(&dx, one4, &zero, &td, &dy, one4, &zero, &td, dga, &nreq);
	MPI_Wait(&nreq, MPI_STATUS_IGNORE);
	res[7] += (int)(2 * dy);

	int all[4 * 8];
	MPI_Gather(res, 8, MPI_INT, all, 8, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int r = 0; r < np; r++)
			printf("rank %d: cart %d row %d graph %d dist_graph %d idup %d create_group %d merge %d neighbours %d\n",
			       r, all[8 * r], all[8 * r + 1], all[8 * r + 2], all[8 * r + 3], all[8 * r + 4],
			       all[8 * r + 5], all[8 * r + 6], all[8 * r + 7]);

	MPI_Comm_free(&merged);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
	if (even != MPI_COMM_NULL)
		MPI_Comm_free(&even);
	MPI_Group_free(&even_group);
	MPI_Group_free(&world_group);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&dg);
	MPI_Comm_free(&dga);
	MPI_Comm_free(&graph);
	MPI_Comm_free(&row);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}

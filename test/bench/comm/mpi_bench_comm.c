/* tinyring: the Open MPI peer of tr_bench_comm: MPI_Allreduce (float, sum,
 * in place) with the same sizes, warm-up, iteration choice and output line:
 *   mpi LABEL N BYTES ITERS USEC_PER_OP ALGBW_GBS BUSBW_GBS
 *   mpirun -np N mpi_bench_comm [LABEL] [SIZES] [BUDGET_MS]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "mpi";
    const char *sizes = argc > 2 ? argv[2] :
        "4096,16384,65536,116136,262144,1048576,4194304,16777216,67108864";
    double budget = argc > 3 ? atof(argv[3]) / 1000.0 : 0.25;
    const char *p;
    size_t max_bytes = 0, i;
    float *buf;
    int rank, world, a;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    for (p = sizes; *p; ) {
        size_t b = (size_t)strtoull(p, (char **)&p, 10);
        if (b > max_bytes) max_bytes = b;
        if (*p == ',') p++;
    }
    buf = malloc(max_bytes ? max_bytes : 4);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (i = 0; i < max_bytes / 4; i++)
        buf[i] = (float)((i + (size_t)rank) & 7) * 0.125f;
    for (p = sizes; *p; ) {
        size_t bytes = (size_t)strtoull(p, (char **)&p, 10);
        int n = (int)(bytes / 4), iters;
        double t0, t;
        if (*p == ',') p++;
        t0 = MPI_Wtime();
        for (a = 0; a < 2; a++)
            MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        t = (MPI_Wtime() - t0) / 2.0;
        iters = (int)(budget / (t > 1e-7 ? t : 1e-7));
        if (iters < 3) iters = 3;
        if (iters > 20000) iters = 20000;
        MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (a = 0; a < iters; a++)
            MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        t = (MPI_Wtime() - t0) / iters;
        if (rank == 0) {
            double algbw = (double)bytes / t / 1e9;
            printf("mpi %s %d %zu %d %.2f %.3f %.3f\n", label, world, bytes, iters, t * 1e6,
                   algbw, algbw * 2.0 * (world - 1) / world);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

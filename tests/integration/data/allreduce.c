/* An MPI all-reduce: every rank adds rank+1; all must see size*(size+1)/2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const char* node = getenv("SLURMD_NODENAME");
  printf("rank %d of %d on %s sum %ld\n", rank, size, node ? node : "?", sum);
  MPI_Finalize();
  return sum == (long)size * (size + 1) / 2 ? 0 : 1;
}

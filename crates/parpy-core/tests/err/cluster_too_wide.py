# Thread block clusters asked for, but the reduction needs 64 blocks and a
# cluster holds at most 8 (`max_thread_blocks_per_cluster`): two kernels as
# without clusters, and a warning that says why.
# backend: cuda
# args: x: f32[10, 100000], y: f32[10], N: i64 = 10
# par: N = threads(10)
# par: M = threads(65536)
# use_cuda_thread_block_clusters
import parpy


@parpy.jit
def row_sum(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.sum(x[i, :])

# Thread block clusters with code after the reduction: each row's sum spans
# 16 blocks (`max_thread_blocks_per_cluster` = 16, a non-portable cluster
# size), then the row's normalization, a parallel loop that the cluster's
# first block runs once the blocks have combined their sums.
# args: x: f32[4, 50000], y: f32[4, 50000], N: i64 = 4
# par: N = threads(4)
# par: M = threads(16384)
# use_cuda_thread_block_clusters
# max_thread_blocks_per_cluster: 16
import parpy


@parpy.jit
def normalize_cluster(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M')
        y[i, :] = x[i, :] / s

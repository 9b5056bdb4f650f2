# `use_cuda_thread_block_clusters`: each row's reduction spans 8 blocks of
# 1024 threads that form one thread block cluster (`__cluster_dims__(1, 8,
# 1)`); the blocks combine their partial sums through distributed shared
# memory in one kernel, and the cluster's first block stores y[i]. (Without
# clusters: row_sum_wide.py, two kernels.) Other backends ignore it on Cpu
# and refuse it on Metal.
# args: x: f32[10, 100000], y: f32[10], N: i64 = 10
# par: N = threads(10)
# par: M = threads(8192)
# use_cuda_thread_block_clusters
import parpy


@parpy.jit
def row_sum_cluster(x, y, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        y[i] = parpy.operators.max(x[i, :])

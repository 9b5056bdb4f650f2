# A top-level reduction over 4 blocks in one cluster along x (no outer
# parallel loop); the host reads the kernel's result.
# args: x: f32[50000], out: f32[1]
# par: all = threads(4096)
# use_cuda_thread_block_clusters
import parpy


@parpy.jit
def total_cluster(x, out):
    parpy.label('all')
    s = parpy.operators.sum(x[:])
    out[0] = s * 2.0

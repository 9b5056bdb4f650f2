"""The forward algorithm of a Nanopore basecalling HMM (ParPy's headline
benchmark, benchmarks/forward.py there), written for parpy.

The model has 16 duration layers of 4^k k-mer states; probabilities are in
log space (float32). For each read (an instance) and each time step, every
state sums (log-sum-exp) the probabilities of its five predecessors: four
k-mer predecessors in the same layer band and one duration predecessor. Two
alpha arrays are used in turn (`src`/`dst` re-bound each step); the result of
a read is the log-sum-exp of its last alpha column.

It uses the language ParPy programs use: helpers with labels inlined with
`parpy.builtin.inline` (their loops take the caller's parallel spec),
re-bound arrays, labelled reductions inside a helper.

    python examples/hmm_forward.py [DATA_DIR] [K] [N_READS]

reads DATA_DIR/{K}mer-model.hdf5 and signals.hdf5 (h5py needed; default
/work/shared/data/hmm, k = 3, the 4 shortest reads) and compares the result
with {K}mer-expected.txt.
"""

import math
import pathlib
import sys

import numpy as np

import parpy
import parpy.builtin as pb
import parpy.math as pm


def load_model(path):
    """The model tables of an HDF5 file, as the kernels take them."""
    import h5py

    with h5py.File(path, "r") as f:
        tables = f["Tables"]
        with np.errstate(divide="ignore"):
            obs = np.log(tables["ObservationProbabilities"][:])
        trans = np.log(tables["TransitionProbabilities"][:])
        duration = np.log(tables["DurationProbabilities"][:])
        tail = float(np.log(tables["DurationProbabilities"].attrs["TailFactor"]))
        k = int(f["Parameters"].attrs["KMerLength"])
    kmers = 4 ** k
    # the observation table is indexed by k-mers with reversed digit order
    rev = [sum(((i // 4 ** x) % 4) * 4 ** (k - x - 1) for x in range(k)) for i in range(kmers)]
    out_prob = np.ascontiguousarray(obs[:, rev], dtype=np.float32)  # (101, kmers)
    init = np.full((16, kmers), -np.inf, dtype=np.float32)
    init[0, :] = np.log(1.0 / kmers)
    return {
        "k": k,
        "trans1": np.ascontiguousarray(trans.reshape(4, kmers).T, dtype=np.float32),
        "trans2": duration.astype(np.float32),
        "out_prob": out_prob,
        "init": init.reshape(-1),
        "gamma": np.float32(tail),
        "synthetic_248": np.float32(math.log(1.0 - math.exp(tail))),
    }


def load_signals(path, which=None):
    """The reads (observation indices 0..100) padded into an int8 matrix,
    with their lengths; `which` selects reads by position."""
    import h5py

    with h5py.File(path, "r") as f:
        signals = [f[key]["Raw"]["Signal"][:] for key in f.keys()]
    if which is not None:
        signals = [signals[i] for i in which]
    lens = np.array([len(s) for s in signals], dtype=np.int64)
    data = np.zeros((len(signals), int(lens.max())), dtype=np.int8)
    for i, s in enumerate(signals):
        data[i, :len(s)] = s
    return data, lens


@parpy.jit
def init_alpha(init, out_prob, data, alpha, inst, num_states):
    o = data[inst, 0]
    parpy.label('state')
    for state in range(num_states):
        alpha[inst, state] = init[state] + out_prob[o, state % (num_states // 16)]


@parpy.jit
def step(trans1, trans2, out_prob, gamma, synthetic_248, data, lens, alpha1, alpha2,
         inst, t, num_states):
    # odd steps read alpha1 and write alpha2, even steps the other way round
    src = alpha2
    dst = alpha1
    if t & 1:
        src = alpha1
        dst = alpha2
    o = data[inst, t]
    kmers = num_states // 16
    parpy.label('state')
    for state in range(num_states):
        if t < lens[inst]:
            base = (state // 4) % (num_states // 64)
            t2 = trans2[state // kmers]
            p1 = trans1[base % kmers, state % 4] + t2 + src[inst, base]
            p2 = (trans1[(kmers // 4 + base) % kmers, state % 4] + t2
                  + src[inst, kmers // 4 + base])
            p3 = (trans1[(2 * kmers // 4 + base) % kmers, state % 4] + t2
                  + src[inst, 2 * kmers // 4 + base])
            p4 = (trans1[(3 * kmers // 4 + base) % kmers, state % 4] + t2
                  + src[inst, 3 * kmers // 4 + base])
            # the duration predecessor: the same k-mer one layer up (the last
            # layer stays where it is, with the tail factor)
            layer = state // kmers
            if layer == 15:
                p5 = gamma + src[inst, state]
            elif layer == 14:
                p5 = synthetic_248 + src[inst, state + kmers]
            else:
                p5 = src[inst, state + kmers]
            m = max(max(max(p1, p2), max(p3, p4)), p5)
            lse = m
            if m > -pb.inf:  # all five -inf stays -inf (not inf - inf)
                lse = m + pm.log(pm.exp(p1 - m) + pm.exp(p2 - m) + pm.exp(p3 - m)
                                 + pm.exp(p4 - m) + pm.exp(p5 - m))
            dst[inst, state] = lse + out_prob[o, state % kmers]


@parpy.jit
def log_sum_exp_last(lens, alpha1, alpha2, result, inst):
    alpha = alpha2
    if lens[inst] & 1 != 0:
        alpha = alpha1
    parpy.label('state')
    m = parpy.reduce.max(alpha[inst, :])
    parpy.label('state')
    s = parpy.reduce.sum(pm.exp(alpha[inst, :] - m))
    result[inst] = m + pm.log(s)


@parpy.jit
def forward(init, trans1, trans2, out_prob, gamma, synthetic_248, data, lens, maxlen,
            result, alpha1, alpha2, num_states, num_instances):
    parpy.label('inst')
    for inst in range(num_instances):
        pb.inline(init_alpha(init, out_prob, data, alpha1, inst, num_states))
        for t in range(1, maxlen):
            pb.inline(step(trans1, trans2, out_prob, gamma, synthetic_248, data, lens,
                           alpha1, alpha2, inst, t, num_states))
        pb.inline(log_sum_exp_last(lens, alpha1, alpha2, result, inst))


def run_forward(model, data, lens, state_threads=256, backend=parpy.CompileBackend.Cpu):
    """Forward log-probabilities of the reads (float32, one per read)."""
    n = data.shape[0]
    num_states = 16 * 4 ** model["k"]
    result = np.zeros(n, dtype=np.float32)
    alpha1 = np.zeros((n, num_states), dtype=np.float32)
    alpha2 = np.zeros_like(alpha1)
    opts = parpy.par({'inst': parpy.threads(n), 'state': parpy.threads(state_threads)})
    opts.backend = backend
    forward(model["init"], model["trans1"], model["trans2"], model["out_prob"],
            model["gamma"], model["synthetic_248"], data, lens, data.shape[1], result,
            alpha1, alpha2, num_states, n, opts=opts)
    return result


def read_expected(path):
    return np.loadtxt(path, dtype=np.float64).astype(np.float32)


def main(argv):
    data_dir = pathlib.Path(argv[1] if len(argv) > 1 else "/work/shared/data/hmm")
    k = int(argv[2]) if len(argv) > 2 else 3
    n_reads = int(argv[3]) if len(argv) > 3 else 4
    import h5py

    with h5py.File(data_dir / "signals.hdf5", "r") as f:
        lengths = [len(f[key]["Raw"]["Signal"]) for key in f.keys()]
    which = sorted(np.argsort(lengths, kind="stable")[:n_reads].tolist())
    model = load_model(data_dir / f"{k}mer-model.hdf5")
    data, lens = load_signals(data_dir / "signals.hdf5", which)
    got = run_forward(model, data, lens)
    expected = read_expected(data_dir / f"{k}mer-expected.txt")[which]
    for i, g, e in zip(which, got, expected):
        print(f"read {i:3d}: {g:.4f} (expected {e:.4f})")
    ok = np.allclose(got, expected, rtol=1e-4)
    print("forward: results match the expected output" if ok else "forward: MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

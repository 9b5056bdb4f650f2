"""Pickling of jit functions and options, and parpy on Dask workers."""

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OFFSET = 3


@parpy.jit
def add_offset(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = x[i] + OFFSET


def cpu_opts(spec):
    o = parpy.par(spec)
    o.backend = parpy.CompileBackend.Cpu
    return o


def test_options_round_trip():
    o = cpu_opts({'i': parpy.threads(8).tpb(64), 'r': parpy.threads(16).par_reduction(),
                  'q': parpy.reduce()})
    o.specialize_scalars = False
    o.extra_flags = ["-O2"]
    o2 = pickle.loads(pickle.dumps(o))
    assert o2 == o
    assert o2 is not o
    assert repr(o2) == repr(o)
    assert dict(o2.parallelize)['i'].threads_per_block == 64
    assert dict(o2.parallelize)['r'].is_reduction
    for b in (parpy.CompileBackend.Cpu, parpy.CompileBackend.Cuda, parpy.CompileBackend.Metal,
              parpy.CompileBackend.Auto):
        assert pickle.loads(pickle.dumps(b)) == b


def test_jit_function_by_reference(tmp_path, monkeypatch):
    (tmp_path / "kmod_pickle.py").write_text(textwrap.dedent("""
        import parpy
        @parpy.jit
        def twice(x, N):
            parpy.label('i')
            for i in range(N):
                x[i] = x[i] * 2
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import kmod_pickle
    assert pickle.loads(pickle.dumps(kmod_pickle.twice)) is kmod_pickle.twice


def test_jit_function_from_main_of_child_process(tmp_path):
    # A function defined in __main__ of another process is rebuilt here
    # from its source, with the module-level constant it uses.
    script = tmp_path / "child_main.py"
    script.write_text(textwrap.dedent("""
        import pickle, sys
        import parpy
        FACTOR = 5
        @parpy.jit
        def scaled(x, y, N):
            parpy.label('i')
            for i in range(N):
                y[i] = x[i] * FACTOR
        @parpy.jit
        def broken(x, N):
            parpy.label('i')
            for i in range(N):
                x[i] = undefined_name
        sys.stdout.buffer.write(pickle.dumps((scaled, broken)))
    """))
    blob = subprocess.run([sys.executable, str(script)], check=True,
                          capture_output=True, timeout=120).stdout
    scaled, broken = pickle.loads(blob)
    x = np.arange(10, dtype=np.int64)
    y = np.zeros(10, dtype=np.int64)
    scaled(x, y, 10, opts=cpu_opts({'i': parpy.threads(4)}))
    assert (y == x * 5).all()
    # diagnostics of the rebuilt function still point at the child's file
    with pytest.raises(parpy.CompileError) as e:
        broken(x, 10, opts=cpu_opts({'i': parpy.threads(4)}))
    assert "child_main.py:14" in str(e.value)
    assert "undefined_name" in str(e.value)


def test_main_function_travels_with_tuples_helpers_and_imported_functions(tmp_path):
    """A jit function of __main__ rebuilt elsewhere lost some globals it
    uses (CompileNameError there): a tuple of tuples, a plain helper
    function (itself using globals and another helper), NumPy and math
    functions imported by name."""
    script = tmp_path / "child_globals.py"
    script.write_text(textwrap.dedent("""
        import pickle, sys
        import numpy as np
        import parpy
        from numpy import exp, float32
        from math import sqrt
        K = ((1.0, 2.0), (3.0, 4.0))
        SHIFT = 0.25
        def inner(v):
            return v * K[1][0] + SHIFT
        def plain(v):
            return inner(v) + sqrt(4.0)
        def ping(n):
            return 0.0 if n <= 0 else pong(n - 1)
        def pong(n):
            return ping(n)
        @parpy.jit
        def f(x, y, N):
            parpy.label('i')
            for i in range(N):
                y[i] = plain(x[i]) + exp(x[i]) + float32(K[0][1])
        @parpy.jit
        def cycle(x, N):
            parpy.label('i')
            for i in range(N):
                x[i] = ping(3)
        opts = parpy.par({'i': parpy.threads(4)})
        opts.backend = parpy.CompileBackend.Cpu
        x = np.linspace(0.0, 1.0, 10)
        y = np.zeros(10)
        f(x, y, 10, opts=opts)
        np.save(sys.argv[1], y)
        sys.stdout.buffer.write(pickle.dumps((f, cycle)))
    """))
    want_file = tmp_path / "want.npy"
    blob = subprocess.run([sys.executable, str(script), str(want_file)], check=True,
                          capture_output=True, timeout=120).stdout
    f, cycle = pickle.loads(blob)
    x = np.linspace(0.0, 1.0, 10)
    y = np.zeros(10)
    f(x, y, 10, opts=cpu_opts({'i': parpy.threads(4)}))
    np.testing.assert_array_equal(y, np.load(want_file))
    np.testing.assert_allclose(y, x * 3.0 + 0.25 + 2.0 + np.exp(x) + 2.0)
    # helpers that call each other travel too (recursion is refused when compiling, as
    # it is where the function was defined)
    with pytest.raises(parpy.CompileError, match="recursion is not supported"):
        cycle(x, 10, opts=cpu_opts({'i': parpy.threads(4)}))


def test_global_that_cannot_travel_is_a_pickling_error_naming_it(tmp_path):
    """A global the rebuilt function needs but that cannot be sent (an
    object of a class of __main__, a lock) is an error when pickling, not
    a CompileNameError in the worker."""
    script = tmp_path / "child_bad.py"
    script.write_text(textwrap.dedent("""
        import pickle, sys, threading
        import parpy
        class Config:
            n = 3
        CONFIG = Config()
        def helper(v):
            return v + CONFIG.n
        @parpy.jit
        def f(x, N):
            parpy.label('i')
            for i in range(N):
                x[i] = helper(x[i])
        def make():
            lock = threading.Lock()
            @parpy.jit
            def g(x, N):
                parpy.label('i')
                for i in range(N):
                    x[i] = lock
            return g
        for fn in (f, make()):
            try:
                pickle.dumps(fn)
                print("pickled")
            except pickle.PicklingError as e:
                print(e)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first.startswith("cannot pickle jit function f: the global `CONFIG` that its "
                            "helper `helper` uses cannot be sent to another process: an "
                            "object of class __main__.Config"), first
    assert second.startswith("cannot pickle jit function make.<locals>.g: the variable "
                             "`lock` that it uses cannot be sent"), second
    assert "does not pickle" in second


def test_jit_function_not_importable_rebuilt_from_source():
    # This test module is not importable by name in a fresh process (tests/
    # is not a package); the payload carries the source as a fallback.
    blob = pickle.dumps(add_offset)
    code = textwrap.dedent("""
        import pickle, sys, numpy as np, parpy
        f = pickle.loads(sys.stdin.buffer.read())
        x = np.arange(6, dtype=np.float64); y = np.zeros(6)
        o = parpy.par({'i': parpy.threads(2)}); o.backend = parpy.CompileBackend.Cpu
        f(x, y, 6, opts=o)
        assert (y == x + 3).all(), y
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                         timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().strip() == "ok"


def test_unpicklable_closure_value_is_a_clear_error_at_compile_time():
    holder = object()

    @parpy.jit
    def uses_object(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = holder
    f = pickle.loads(pickle.dumps(uses_object))
    with pytest.raises(parpy.CompileError, match="holder"):
        f(np.zeros(3), 3, opts=cpu_opts({'i': parpy.threads(2)}))


def test_dask_map_blocks_on_two_worker_processes():
    pytest.importorskip("dask.array")
    pytest.importorskip("dask.distributed")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "dask_rows.py"),
                          "--workers", "2", "--rows", "4000", "--cols", "64"],
                         capture_output=True, timeout=300, text=True)
    assert out.returncode == 0, out.stderr
    assert "on 2 worker processes agree with NumPy" in out.stdout


def test_dask_with_kernel_of_a_module_the_workers_cannot_import():
    pytest.importorskip("dask.array")
    distributed = pytest.importorskip("dask.distributed")
    import dask.array as da

    def block(b, opts):
        y = np.empty(b.shape[0], dtype=b.dtype)
        add_offset(b, y, b.shape[0], opts=opts)
        return y

    opts = cpu_opts({'i': parpy.threads(4)})
    x = da.arange(1000, chunks=250, dtype=np.float64)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = client.compute(x.map_blocks(block, opts, dtype=x.dtype), sync=True)
    assert (got == np.arange(1000) + 3).all()

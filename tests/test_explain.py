"""Why a function compiled: fn.specializations(), parpy.explain, PARPY_LOG=info."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import parpy


def make(cache_dir):
    @parpy.jit
    def add1(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = x[i] + 1
    o = parpy.par({'i': parpy.threads(4)})
    o.backend = parpy.CompileBackend.Cpu
    o.cache_dir = str(cache_dir)
    return add1, o


def test_reasons_for_each_build(tmp_path):
    f, o = make(tmp_path)
    f(np.zeros(100), 50, opts=o)
    f(np.zeros(65), 50, opts=o)
    f(np.zeros(65), 50, opts=o)               # cached: no new build
    f(np.zeros(65, np.float32), 50, opts=o)
    f(np.zeros(65, np.float32), 7, opts=o)
    o2 = o.copy()
    o2.specialize_scalars = False
    f(np.zeros(65, np.float32), 7, opts=o2)
    specs = f.specializations()
    assert [s["reason"] for s in specs] == [
        "first call",
        "new shape for x: (100,) -> (65,)",
        "new dtype for x: float64 -> float32",
        "new value for N: 50 -> 7",
        "N is passed at run time (not specialized); different options",
    ]
    assert specs[0]["args"] == {"x": "float64[100]", "N": "int (Python) = 50"}
    assert specs[-1]["args"]["N"] == "int (Python)"
    assert all(s["backend"] == "Cpu" for s in specs)
    assert all(s["device"] is None for s in specs)  # a CUDA device for Cuda builds
    for s in specs:
        assert set(s["phases"]) == {"inspect", "lower", "passes", "codegen", "build+load"}
        assert all(v >= 0 for v in s["phases"].values())
    text = parpy.explain(f)
    assert text.startswith("add1: 5 builds")
    assert "why: new shape for x: (100,) -> (65,)" in text


def test_a_rebuild_is_explained_against_the_closest_earlier_build(tmp_path):
    # (the previous build was compared: a new shape after a float32 build
    # read "new dtype for x: float32 -> float64")
    f, o = make(tmp_path)
    o.specialize_scalars = False
    f(np.ones(8), 8, opts=o)
    f(np.ones(8, np.float32), 8, opts=o)
    f(np.ones(9), 9, opts=o)
    f(np.ones(5, np.float32), 5, opts=o)
    assert [s["reason"] for s in f.specializations()] == [
        "first call",
        "new dtype for x: float64 -> float32",
        "new shape for x: (8,) -> (9,)",
        "new shape for x: (8,) -> (5,)",
    ]
    assert "why: new shape for x: (8,) -> (9,)" in parpy.explain(f)


def test_numpy_scalar_and_origin_disk_in_a_new_process(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np, parpy
        @parpy.jit
        def scale(x, a, N):
            parpy.label('i')
            for i in range(N):
                x[i] = x[i] * a
        o = parpy.par({{'i': parpy.threads(2)}})
        o.backend = parpy.CompileBackend.Cpu
        o.cache_dir = {str(tmp_path / 'cache')!r}
        scale(np.ones(8, np.float32), np.float32(0.5), 8, opts=o)
        s = scale.specializations()[0]
        print(s["origin"], "|", s["args"]["a"])
    """))
    env = dict(os.environ, PARPY_LOG="info")
    first = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=120, env=env)
    second = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, env=env)
    assert first.stdout.strip() == "built | float32 (NumPy) = 0.5", first.stderr
    assert second.stdout.strip() == "disk | float32 (NumPy) = 0.5", second.stderr
    assert "parpy: scale for Cpu (built," in first.stderr and "first call" in first.stderr
    assert "parpy: scale for Cpu (disk," in second.stderr


def test_no_log_line_without_parpy_log(tmp_path):
    code = textwrap.dedent(f"""
        import numpy as np, parpy
        @parpy.jit
        def z(x, N):
            parpy.label('i')
            for i in range(N):
                x[i] = 0
        o = parpy.par({{'i': parpy.threads(2)}}); o.backend = parpy.CompileBackend.Cpu
        z(np.ones(4), 4, opts=o)
    """)
    (tmp_path / "z.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PARPY_LOG"}
    r = subprocess.run([sys.executable, str(tmp_path / "z.py")], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0 and "parpy: z for" not in r.stderr


def test_clear_cache_forgets_the_history(tmp_path):
    f, o = make(tmp_path)
    f(np.zeros(3), 3, opts=o)
    assert len(f.specializations()) == 1
    parpy.clear_cache()
    assert f.specializations() == []
    assert parpy.explain(f) == "add1: 0 builds"


def test_explain_rejects_other_objects():
    with pytest.raises(TypeError, match="@parpy.jit function"):
        parpy.explain(print)

"""`python -m parpy`: info, cache and print."""

import os
import subprocess
import sys
import textwrap

import numpy as np

import parpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUM_ROWS = os.path.join(ROOT, "examples", "sum_rows.py")


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "parpy", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)


def test_info_names_every_backend_and_the_cache():
    r = cli("info")
    assert r.returncode == 0, r.stderr
    assert f"parpy {parpy.__version__}" in r.stdout
    for b in ("Cpu", "Cuda", "Metal"):
        assert f"  {b} " in r.stdout
    assert "Cpu    usable" in r.stdout
    assert "C compiler: " in r.stdout and "cache: " in r.stdout


def test_cache_size_list_clear(tmp_path):
    d = tmp_path / "cache"

    @parpy.jit
    def inc(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = x[i] + 1
    opts = parpy.par({'i': parpy.threads(2)})
    opts.backend = parpy.CompileBackend.Cpu
    opts.cache_dir = str(d)
    inc(np.zeros(4), 4, opts=opts)
    r = cli("cache", "size", "--dir", str(d))
    assert r.returncode == 0, r.stderr
    assert "1 builds" in r.stdout
    r = cli("cache", "list", "--dir", str(d))
    assert ".meta" in r.stdout and ".so" in r.stdout
    r = cli("cache", "clear", "--dir", str(d))
    assert r.returncode == 0 and "removed" in r.stdout
    assert "0 builds, 0 files" in cli("cache", "size", "--dir", str(d)).stdout


def test_cache_clear_dir_clears_only_that_directory(tmp_path):
    """`cache clear --dir OTHER` also emptied the default cache directory
    (it cleared every cache); now only OTHER, and it says what went."""
    default = tmp_path / "xdg" / "parpy"
    other = tmp_path / "other"

    @parpy.jit
    def inc(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = x[i] + 1
    for d in (default, other):
        opts = parpy.par({'i': parpy.threads(2)})
        opts.backend = parpy.CompileBackend.Cpu
        opts.cache_dir = str(d)
        inc(np.zeros(4), 4, opts=opts)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert f"{default}: 1 builds" in cli("cache", "size", env=env).stdout
    r = cli("cache", "clear", "--dir", str(other), env=env)
    assert r.returncode == 0, r.stderr
    assert f"{default}: 1 builds" in cli("cache", "size", env=env).stdout
    assert "0 builds, 0 files" in cli("cache", "size", "--dir", str(other), env=env).stdout
    assert f"removed 2 files (1 builds) from {other}" in r.stdout
    # without --dir: the default directory
    r = cli("cache", "clear", env=env)
    assert r.returncode == 0 and f"removed 2 files (1 builds) from {default}" in r.stdout
    assert f"{default}: 0 builds" in cli("cache", "size", env=env).stdout


def test_print_cuda_and_metal_of_a_file_function():
    common = ["--arg", "f32[100,1024]", "--arg", "f32[100]", "--arg", "100",
              "--par", '{"outer": 100}']
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--backend", "cuda", *common)
    assert r.returncode == 0, r.stderr
    assert "__global__" in r.stdout and "parpy-param: x f32[100,1024]" in r.stdout
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--backend", "metal", *common)
    assert r.returncode == 0, r.stderr
    assert "kernel" in r.stdout
    r = cli("print", f"{SUM_ROWS}:sum_rows", *common)
    assert "#pragma omp" in r.stdout or "parpy_entry_sum_rows" in r.stdout


def test_print_module_function_with_scalars_and_par_objects(tmp_path):
    (tmp_path / "clikern.py").write_text(textwrap.dedent("""
        import parpy
        @parpy.jit
        def scale(x, a, N):
            parpy.label('i')
            for i in range(N):
                x[i] = x[i] * a
    """))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    r = cli("print", "clikern:scale", "--arg", "f64[64]", "--arg", "f32:0.5", "--arg", "64",
            "--par", '{"i": {"threads": 64, "tpb": 32}}', "--backend", "cuda", env=env)
    assert r.returncode == 0, r.stderr
    assert "parpy-param: a f32" in r.stdout


def test_print_usage_errors_are_one_line_and_exit_2():
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--arg", "q7[3]")
    assert r.returncode == 2 and "unknown element type 'q7'" in r.stderr
    assert "Traceback" not in r.stderr
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--arg", "f32[3]")
    assert r.returncode == 2 and "takes 3 arguments" in r.stderr
    r = cli("print", f"{SUM_ROWS}:nope", "--arg", "1")
    assert r.returncode == 2 and "no attribute 'nope'" in r.stderr
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--par", "{bad", "--arg", "1")
    assert r.returncode == 2 and "not valid JSON" in r.stderr
    # a count parpy.threads refuses (a traceback before)
    for par in ['{"outer": 0}', '{"outer": {"threads": 64, "tpb": 33}}']:
        r = cli("print", f"{SUM_ROWS}:sum_rows", "--par", par, "--arg", "f32[4,4]",
                "--arg", "f32[4]", "--arg", "4")
        assert r.returncode == 2 and "--par: label 'outer'" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_print_bad_arguments_are_usage_errors(tmp_path):
    """Values parpy refuses gave tracebacks (OverflowError, TypeError,
    ValueError); an object without "threads" blamed parpy.reduce(); a
    parameter with a default could not be left out."""
    kern = tmp_path / "defkern.py"
    kern.write_text(textwrap.dedent("""
        import parpy
        @parpy.jit
        def g(x, N, c=2.0):
            parpy.label('i')
            for i in range(N):
                x[i] = x[i] * c
    """))
    target = f"{kern}:g"
    for args, words in [
        (["--arg", "i8[4]", "--arg", "i8:300", "--arg", "1.0"],
         "--arg 'i8:300': Python integer 300 out of bounds for int8"),
        (["--arg", "O[4]", "--arg", "4", "--arg", "1.0"],
         "element type 'O' (object) is not supported by parpy"),
        (["--arg", "f32[4]", "--arg", "99999999999999999999999", "--arg", "1.0"],
         "--arg '99999999999999999999999': an int argument must fit in 64 bits"),
        (["--arg", "f32[4]", "--arg", "4", "--arg", "1.0", "--par", '{"i": {"tpb": 64}}'],
         "--par: the object for label 'i' has no \"threads\""),
        (["--arg", "f32[4]"], "g takes 2 to 3 arguments (x, N, c=...); 1 --arg given"),
    ]:
        r = cli("print", target, "--par", '{"i": 4}', *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("python -m parpy print: error: "), r.stderr
        assert words in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    # a parameter with a default may be left out (print_compiled fills it in)
    r = cli("print", target, "--arg", "f32[4]", "--arg", "4", "--par", '{"i": 4}')
    assert r.returncode == 0, r.stderr
    assert "parpy-param: x f32[4]" in r.stdout


def test_print_compile_error_is_rendered():
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--arg", "f32[10,4]", "--arg", "f32[10]",
            "--arg", "10", "--par", '{"outer": 10}', "--backend", "metal")
    # float32 on Metal compiles; a float64 array is a rendered CompileError
    assert r.returncode == 0, r.stderr
    r = cli("print", f"{SUM_ROWS}:sum_rows", "--arg", "f64[10,4]", "--arg", "f64[10]",
            "--arg", "10", "--par", '{"outer": 10}', "--backend", "metal")
    assert r.returncode == 1 and "float64" in r.stderr and "Traceback" not in r.stderr


def test_a_target_that_is_not_a_function_and_a_file_as_cache_dir_are_usage_errors(tmp_path):
    """Both ended in a raw traceback (parpy.jit's TypeError, an OSError
    of the cache)."""
    kern = tmp_path / "notfn.py"
    kern.write_text("K = 3\n")
    r = cli("print", f"{kern}:K", "--arg", "f32[3]")
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"python -m parpy print: error: {kern}:K: K is int 3, not a function\n"
    for action in ("clear", "size", "list"):
        r = cli("cache", "--dir", str(kern), action)
        assert r.returncode == 2, r.stderr
        assert r.stderr == f"python -m parpy cache: error: --dir {kern}: not a directory\n"

"""Runs the example scripts as a user would and checks what they print."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run_example(name, *args, cache_dir=None):
    env = dict(os.environ)
    if cache_dir is not None:
        env["XDG_CACHE_HOME"] = str(cache_dir)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, (
        f"{name} exited with {proc.returncode}\n--- stdout ---\n{proc.stdout}"
        f"\n--- stderr ---\n{proc.stderr}"
    )
    return proc.stdout


def test_sum_rows(tmp_path):
    out = run_example("sum_rows.py", cache_dir=tmp_path)
    assert "compile_string: result matches NumPy" in out
    # the generated C code is printed: an OpenMP loop and a host entry named
    # after the Python function
    assert "#pragma omp" in out
    assert "sum_rows" in out.split("---- generated C code ----", 1)[1]


def test_sum_rows_cuda_flag(tmp_path):
    # Without CUDA support in the core this prints a message instead of
    # failing; with it, it prints the CUDA code.
    out = run_example("sum_rows.py", "--backend", "cuda", cache_dir=tmp_path)
    assert ("generated cuda code" in out) or ("not available" in out)


def test_print_and_edit(tmp_path):
    out = run_example("print_and_edit.py", cache_dir=tmp_path)
    assert "edited code ran; result matches NumPy" in out
    typo = out.split("---- the typo case ----", 1)[1]
    assert "error" in typo and "`out`" in typo
    assert "print_and_edit.py:" in typo


def test_print_and_edit_with_file(tmp_path):
    # print the code with one run, save it, and feed it back with --edit-with
    out = run_example("print_and_edit.py", cache_dir=tmp_path)
    code = out.split("---- generated code ----\n", 1)[1].split("---- edited code", 1)[0]
    f = tmp_path / "edited.c"
    f.write_text(code.rstrip("\n") + "\n/* user edit */\n")
    out2 = run_example("print_and_edit.py", "--edit-with", str(f), cache_dir=tmp_path)
    edited = out2.split("---- edited code (last lines) ----", 1)[1]
    assert "/* user edit */" in edited.split("edited code ran", 1)[0]
    assert "edited code ran; result matches NumPy" in out2


def test_normalize_rows(tmp_path):
    out = run_example("normalize_rows.py", cache_dir=tmp_path)
    err = out.split("---- inconsistent parallel structure ----", 1)[1].split("---- fix 1", 1)[0]
    assert "error" in err
    for word in ("M1", "M2", "128", "256"):
        assert word in err, f"{word!r} missing from the inconsistent-structure error:\n{err}"
    assert "fix 1: result matches NumPy" in out
    assert "fix 2: result matches NumPy" in out


@pytest.mark.parametrize("name", ["sum_rows.py", "print_and_edit.py", "normalize_rows.py"])
def test_examples_have_docstrings(name):
    text = (EXAMPLES / name).read_text()
    assert text.startswith('"""'), f"{name} should start with a docstring explaining it"

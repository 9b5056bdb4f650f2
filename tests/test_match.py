"""`match` statements in jit code: value patterns (`case 0:`, `case -1 |
2:`, a module-level constant), captures (`case n:`, `case 1 | 2 as k:`),
`case _:` and guards, as Python's `if`/`elif` chain of `==` tests; other
patterns and a subject with effects are located errors."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, module_from_source, run_both

LIMIT = 3


@parpy.jit
def classify(x, k, y, N):
    parpy.label('i')
    for i in range(N):
        match k[i] % 5:
            case 0:
                y[i] = x[i]
            case 1 | -4:
                y[i] = 2.0 * x[i]
            case 2 as two:
                y[i] = x[i] + two
            case n if n > LIMIT and x[i] > 0.0:
                y[i] = n * 10.0
            case -1 | -2:
                y[i] = -1.0
            case _:
                y[i] = 99.0


@parpy.jit
def captured(k, y, N):
    parpy.label('i')
    for i in range(N):
        v = 0
        match k[i]:
            case 3:
                v = 30
            case m:
                v = m + 1
        y[i] = v * 2


@parpy.jit
def no_case_matches(k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = -1.0
        match k[i]:
            case 1.5:
                y[i] = 1.0
            case 2:
                y[i] = 2.0


def test_match_is_pythons_chain_of_equality_tests():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(200)
    k = rng.integers(-20, 20, 200)
    opts = cpu_opts({'i': parpy.threads(200)})
    run_both(classify, [x, k, np.zeros(200), 200], opts)
    run_both(captured, [k, np.zeros(200, np.int64), 200], opts)
    # (a float subject compared with int and float values, none matching)
    run_both(no_case_matches, [np.array([1.5, 2.0, 3.0]), np.zeros(3), 3],
             cpu_opts({'i': parpy.threads(3)}))


def test_match_compiles_for_cuda_and_metal():
    check_gpu_code(classify, lambda b: [np.zeros(8, np.float32), np.zeros(8, np.float32),
                                        np.zeros(8, np.float32), 8],
                   {'i': parpy.threads(8)}, "match")


@pytest.mark.parametrize("case,words", [
    ("case (a, b):", "sequence patterns are not supported"),
    ("case {'a': 1}:", "mapping patterns are not supported"),
    ("case int():", "class patterns are not supported"),
    ("case None:", "`None`, `True` and `False` patterns"),
    ("case (1 as n) | (2 as n):", "the alternatives of an `|` pattern must be values"),
])
def test_what_a_match_cannot_be_is_a_located_error(case, words, tmp_path):
    mod = module_from_source(
        tmp_path, "match_mod",
        "import parpy\n\n"
        "def f(k, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        "        match k[i]:\n"
        f"            {case}\n"
        "                y[i] = 1.0\n")
    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(parpy.jit(mod.f), [np.ones(3), np.zeros(3), 3],
                             cpu_opts({'i': parpy.threads(3)}))
    assert words in str(e.value) and "match_mod.py:7" in str(e.value), str(e.value)


def test_a_subject_that_calls_a_function_is_refused(tmp_path):
    mod = module_from_source(
        tmp_path, "match_call",
        "import parpy\n\n"
        "@parpy.jit\n"
        "def step(v):\n"
        "    return v + 1.0\n\n"
        "def f(k, y, N):\n"
        "    parpy.label('i')\n"
        "    for i in range(N):\n"
        "        match step(k[i]):\n"
        "            case 2.0:\n"
        "                y[i] = 1.0\n")
    with pytest.raises(parpy.CompileError, match="the subject of a `match` must not call functions"):
        parpy.print_compiled(parpy.jit(mod.f), [np.ones(3), np.zeros(3), 3],
                             cpu_opts({'i': parpy.threads(3)}))

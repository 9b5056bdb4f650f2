"""parpy's differential fuzzer.

    python -m parpy._fuzz --seconds 600            # Cpu, until the time is up
    python -m parpy._fuzz --cases 10000 --backend cuda --out fuzz-out
    python -m parpy._fuzz --cases 1000 --backend cuda-emu   # Cuda code on the CPU
    python -m parpy._fuzz --seed 1234 --show       # print one generated program

Each case is a random, race-free parpy program generated from its seed
alone (same seed, same program and arguments): nested labelled parallel
loops whose thread counts do and do not divide the trip counts, sequential
loops around and inside them, slices, reductions (labelled or not),
`par_reduction` loops, `if`/`while` (also `while` loops whose trip
count the data decides), helper jit functions (also with loops, early
returns and tuple results), tuple swaps and augmented assignments of
scalars, the NumPy and `math` functions of the reference, sorts and
searches, `with parpy.gpu:` blocks, every element type, Python and NumPy scalar arguments,
specialized or not. It runs in Python mode (`CompileBackend.Python`, the
oracle) and on the chosen backend, and every array is compared (integers
and bools exactly, floats with a tolerance for reordered reductions and
fused multiply-adds). Every case is also compiled for Cuda through NVRTC
(when the `nvidia-cuda-nvrtc` wheel is present) and printed for Metal and
syntax-checked by clang-19 (when installed, in a checkout); an internal
error there is a failure, a documented backend limitation (float16 atomics on
Cuda, float64 on Metal, ...) is not.

A failure is a mismatch, a compile error (valid programs must compile), an
internal error, a crash or a hang (each case runs in a worker process).
A program may hold one `assert` / `raise ValueError` with an f-string
message that its data makes fail (`check_messages`): when the undecorated
function raises it, the compiled call must raise the same class with the
same text (`raise-mismatch` otherwise), and the arrays are not compared.
Each failure is written as a standalone script `OUT/seedN.py` that rebuilds
the arguments, runs the oracle and the backend and prints `same` or
`DIFFERENT` per array (`python OUT/seedN.py Cpu`).

Race freedom by construction: an output array is written by one top-level
unit; inside a parallel loop nest it is written only at depth d, at an
index whose first d subscripts are the enclosing parallel loop variables,
and read there only at that prefix (or anywhere once the loops that write
it have finished).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
DTYPES = ["bool"] + INTS + FLOATS
THREADS = [1, 2, 3, 5, 8, 16, 31, 32, 64, 100, 128, 256, 1000, 1024]
TPB = [32, 64, 128, 256, 512, 1024]
# features that the numbered items of issue 9 concern (`--avoid` turns them off)
FEATURES = [
    "bool_invert", "bool_arith", "numpy_scalar", "reduce_sum_narrow", "reduce_u64_minmax",
    "math_narrow_int", "uint_cmp_negative", "f16_reduce", "neg_index", "slice_overlap",
    "float_floordiv", "no_specialize",
    # found by this fuzzer, fixed: a slice reduction inside the body of a
    # par_reduction loop (refused before)
    "reduce_in_par_reduction",
    # parpy.atomic.add/max/min on arrays only atomic updates touch
    "atomics",
    # `break` / `continue` under a condition: in sequential `for` loops
    # (also the host loop around a nest), `break` in `while` loops,
    # `continue` in parallel loops; `else:` after sequential loops
    "jumps",
    # math added in stop 20: log10 ... atanh, trunc, sign, np.square,
    # np.fmax / np.fmin
    "more_math",
    # loops over input arrays and rows: `for v in x`, enumerate, zip,
    # reversed (stop 20)
    "natural_loops",
    # `for j in range(M): acc = ...; for k in range(K): acc = acc op e;
    # o[..., j] = acc`: what the Cpu backend unrolls and jams (stop 21)
    "jam_loops",
    # two sibling parallel loops over rows, the second reading rows `i + c`
    # of what the first writes (and the first reading what the second
    # writes): what the Cpu backend fuses with a skew (stop 22)
    "skew_loops",
    # slices with a step, negative ones included (`x[i, 7:0:-3]`), read and
    # written (stop 25)
    "strided_slices",
    # `sum(v for v in slice if v > c)`: generator expressions (stop 25)
    "generators",
    # keyword arguments and defaults: `np.sum(s, axis=None)`, helpers with
    # literal defaults called by name or leaving them out (stop 26)
    "keywords",
    # `e = <slice expression>` then `o[..., lo:hi] = e` (stop 26)
    "array_locals",
    # `for d in (2, 0, 1):`, `for d, w in ((1, 0.5), (0, 2.0)):` (stop 27)
    "tuple_loops",
    # a helper called by each element of a reduction (stop 27: the Cpu's
    # pairwise sum helper was written before the helper it calls)
    "helper_in_reduce",
    # `np.sum(x[i, a:b, c:d], axis=0)` and the other reductions along one
    # axis of a 2-D slice, in slice statements and inside reductions
    # (stop 28)
    "axis_reduce",
    # `assert` statements that hold (a parallel counter below its extent,
    # an integer expression equal to itself), in host code and in loops
    # (stop 28)
    "asserts",
    # `o[..., lo:hi] = np.cumsum(slice)` / `np.cumprod` (stop 28)
    "scans",
    # `v @ m`, `m @ v`, `np.dot(m, v)`, `np.sum(v[:, None] * m, axis=0)`:
    # products of a 1-D and a 2-D slice where an axis reduction goes
    # (stop 29)
    "matmul",
    # `la = np.zeros(n, dtype=...)` (or `np.ones`, `np.full`,
    # `np.zeros_like(slice)`) inside a parallel loop, updated element by
    # element in a loop, then stored into a slice (stop 29)
    "local_arrays",
    # `np.add(a, b)`, `np.less(a, b)`, `np.negative(a)`, ...: operators
    # spelled as NumPy's ufuncs where an operand is a NumPy value (the
    # same type then; of Python numbers alone a ufunc gives a NumPy value)
    # (stop 30)
    "ufunc_names",
    # `np.sum(x[i, a:b, c:d])`, `np.mean(x[j, :, :, k])` and the other
    # reductions of a slice of 2 or 3 dimensions without `axis` (stop 31:
    # the Cpu adds float sums in NumPy's runs, through a local buffer)
    "multi_reduce",
    # `np.flip(s)`, `np.roll(s, k, axis)` of the slices read, `s.T`,
    # `np.diagonal(s, 0, -2, -1)` and `np.trace(s)` of those reduced
    # (stop 32: views without a copy; a roll written over what it reads)
    "views",
    # `x[i, 2:9][1:4]`: a slice of a slice, which indexes the first one's
    # elements (stop 33: composed into one subscript)
    "chains",
    # `np.median(s)`, `np.percentile(s, q)`, `np.quantile(s, q)`,
    # `np.argmax(s)`, `np.argmin(s)` of a slice (stop 33: NumPy's values bit
    # for bit, found by counting)
    "order_stats",
    # `np.add.reduce(s)` and the other ufuncs' `reduce`,
    # `np.maximum.accumulate(s)` and the other `accumulate`s (stop 34)
    "ufunc_methods",
    # `np.interp(v, s1, s2)` of a number and two slices of one length
    # (stop 34)
    "interp",
    # `for j in range(n): w = s[j:j + L]; o[..., lo:hi][j] = w[c]`: a named
    # window (a view whose start is a loop counter) of a slice (stop 34)
    "windows",
    # `lc = s.copy()` (or `np.copy(s)`, `s * 1`), then elements written,
    # the name re-bound (`lc = lc[::-1] + lc`), `lc += lc[j]`, a masked
    # store `lc[lc > c] = v`, and `o[..., lo:hi] = lc`: NumPy's new arrays
    # in local arrays (stop 35)
    "local_copies",
    # `o[..., lo:hi] = [e1, e2, ...]`: a list of numbers of the target's
    # type, NumPy's array of them (stop 35)
    "lists",
    # `o[..., lo:hi] = np.sum(s1[s2 > c])` and the other reductions of a
    # masked read, of an expression of reads through one mask, `len` of
    # one (stop 36: the selected elements packed, summed pairwise over
    # their count)
    "masked_reads",
    # `np.sort(s)[a:b]`, `np.cumsum(s)[::2]`, `(s * 2)[a:b]`,
    # `np.concatenate((s1, s2))`: arrays made by a statement of their own
    # before the one that reads them (stop 36)
    "hoisted",
    # `np.tile(s, 2)[a:b]`, `np.repeat`, `np.stack((s, s * 2))[j, :]`,
    # `s * np.eye(n)[j, :]`: joined and diagonal arrays in `hoisted`
    # statements (stop 37)
    "joined",
    # `a ** k` of integers (k in 0..3), and `2 ** -k` of Python ints (a
    # Python float) in float expressions (stop 37)
    "int_powers",
    # `a in (1, 2, 3)`, `a not in [..]`, `a in range(lo, hi, step)`,
    # `a in s` of a slice: membership tests in conditions (stop 38)
    "membership",
    # `np.swapaxes(s, 0, 1)`, `s.mT`, `np.moveaxis(s, 0, -1)`,
    # `np.transpose(s, (1, 0))` of a 2-D slice reduced (stop 38: the
    # transposed view)
    "permutes",
    # the tuple of a `tuple_loops` loop named first (`t = ((1, 0.5), (0,
    # 2.0))`, then `for d, w in t:`), and rows of a 2-D slice unpacked
    # (`for a, b in s`) (stop 39)
    "tuple_locals",
    # `o[p, a:b, c:d] = expr of 2-D slices (or rows broadcast over them)`
    # with zero, one or two labels: the last label takes the innermost
    # sliced dimension (ParPy's rule, stop 43)
    "multi_labels",
    # some arguments passed in one dict argument (nested dicts too) and
    # read as `d['x0']`, `d['g']['N1']` (stop 43; drawn from a random
    # stream of its own, so the program is otherwise the seed's as before)
    "dict_args",
    # the row loops of `skew_loops` with a scalar of each row read before
    # the inner loop, a running sum along the row, or a term read under a
    # branch: what the Cpu backend runs two rows at a time (stop 44; drawn
    # from a stream of its own, like `dict_args`)
    "row_pairs",
    # `for s in range(a, b, st0)` of sequential loops, the step a scalar
    # argument (a run-time step when not specialized; stop 100; drawn from
    # a stream of its own, like `dict_args`)
    "run_time_step",
    # `k = lo; while k < n and x[.., k] > v: k += 1` (and `k -= 1` down to
    # -1, `while True:` with a `break`, a running sum in the body): trip
    # counts the data decides, inside parallel loops (stop 57; drawn from
    # a stream of its own, like `dict_args`)
    "data_while",
    # `q, r = h(a, b)` (or `h(a, b)[1]`) of a helper with a `for` loop, an
    # early `return acc, j` inside it and a tuple result (stop 57; a
    # stream of its own)
    "helper_tuples",
    # scalar locals swapped and updated as tuples (`a, b = b, a + b`, in a
    # loop too), chained assignments (`c = d = e`), `q, r = divmod(a, b)`,
    # augmented assignments of every operator that keeps the local's type
    # and of array elements (`o[..] //= e`: NumPy's casting, what
    # `same_kind` refuses left out) (stop 57; a stream of its own)
    "scalar_updates",
    # np.gcd / np.lcm / math.gcd, math.prod of a tuple, `x.itemsize`,
    # `x.nbytes`, divmod(a, b)[k], pow, round, np.ldexp, np.nextafter,
    # np.spacing, math.ulp, math.remainder, np.conj, np.real,
    # math.degrees / radians, np.isposinf / np.isneginf, np.where of mixed
    # types, `if x.dtype == np.float32:` branches (stop 57; a stream of
    # its own)
    "new_math",
    # Python's `max(*s)` / `min(*s)` of a slice's elements spread as
    # arguments (stop 63; a stream of its own)
    "spread",
    # `o[.., lo:hi] = np.sort(s)` / `np.argsort(s, kind='stable')` as the
    # whole right side, `o[.., lo:hi].sort()` in place, `k =
    # np.searchsorted(s, v, side=..)` (stop 57; a stream of its own)
    "sort_search",
    # `o[.., lo:hi] = np.clip(s, lo, hi)` (`s.clip(lo, hi)`, a bound None,
    # `min=` / `max=`), `np.clip(s, lo, hi, out=o[.., lo:hi])`, `np.maximum(s1,
    # s2, out=..)`, `o[.., lo:hi] = np.where(s1 > v, s1, s2)` (a number for
    # either branch too), and scalar `np.clip(e, lo, hi)` / `np.where(c, a,
    # b)` locals stored (stop 58; a stream of its own)
    "clips",
    # optional parameters (`def kern(.., w0=None, z0=None)`, an array and a
    # float, each passed None (or left to the default) or a value) read
    # under `if w0 is not None:` / `w0 is None or w0[k] > v` / `a if z0 is
    # not None else b` (stop 59; the parameters and their values from a
    # stream of their own, the statements from another)
    "none_args",
    # `r, c = np.unravel_index(k, shape)` (then `np.ravel_multi_index`),
    # `np.bitwise_count(e)` (of slices too), `max(a, b, key=abs)` /
    # `min(.., key=np.abs)`, `initial=` of np.max / np.min / np.sum (of
    # empty slices too), and stores into run-time slices `o[.., a:b] =
    # x[.., a:b] * 2.0` (stop 59; a stream of its own)
    "index_idioms",
    # whole reductions of 2-D blocks with run-time bounds (`x[.., a:b,
    # c:d].sum()`, `.mean()`, `np.max`, .., the bounds scalar arguments,
    # loop variables or sizes, inside the array), and 1-D run-time slice
    # stores whose operand has other bounds of the same length (`o[.., a:b]
    # = x[.., a + 1:b + 1] * 2.0`) or one element (broadcast) (stop 60; a
    # stream of its own)
    "run_time_blocks",
    # `assert c, f"... {x[i]:.3f} {v!r} ..."` and `if c: raise
    # ValueError(f"...")`: at most one check of a program may fail (at one
    # point of the parallel loops around it, its condition read from the
    # data); when the undecorated function raises, the compiled one must
    # raise the same class with the same text (other asserts hold)
    # (stop 60; a stream of its own)
    "check_messages",
    # `sorted((a, b, c), key=abs, reverse=True)[k]` and `p, q, r =
    # sorted([..])` of 2 to 8 numbers of one type (stop 60; a stream of its
    # own)
    "sorted_items",
    # `np.sum(s, where=m)`, `s.sum(where=s > v)`, `np.max(s, where=m,
    # initial=v)`, `.min(initial=v, where=..)` of 1-D slices, the mask a
    # bool slice or a comparison (stop 60; a stream of its own)
    "masked_where",
    # `initial=` of np.max / np.min / np.sum (and the methods) of integer
    # slices, the value of the array's type: an element of an array of that
    # type, `np.int16(-7)`, the type's least or greatest value, `c0`
    # (stop 60; a stream of its own)
    "int_initial",
    # the messages of `check_messages` built by `"..".format(a, b)` (fields
    # numbered or not), `".. %.3f %r" % (a, b)` and `"lit " + str(a) +
    # repr(b) + format(c, ".2e")` (stop 61; a stream of its own)
    "message_forms",
]

# the ufunc whose `reduce` / `accumulate` each reduction / scan is
# (`ufunc_methods`)
UFUNC_OF_REDUCTION = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
                      "cumsum": "add", "cumprod": "multiply"}

# the ufunc of each operator (`ufunc_names`)
UFUNC_OF = {
    "+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
    "%": "remainder", "**": "power", "&": "bitwise_and", "|": "bitwise_or",
    "^": "bitwise_xor", "<<": "left_shift", ">>": "right_shift", "<": "less",
    "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
    "!=": "not_equal",
}


# --------------------------------------------------------------------------
# types: a NumPy dtype name (strong) or "wi"/"wf"/"wb" (weak Python int,
# float, bool: NEP 50). Result types are found by evaluating the operation
# on sample values with NumPy itself.

WEAK = {"wi": int, "wf": float, "wb": bool}


def _sample(t: str) -> Any:
    if t == "wi":
        return 1
    if t == "wf":
        return 1.5
    if t == "wb":
        return True
    return np.dtype(t).type(1)


def _type_of(v: Any) -> Optional[str]:
    if isinstance(v, np.generic):  # before float: np.float64 derives from it
        return v.dtype.name
    if isinstance(v, bool):
        return "wb"
    if isinstance(v, int):
        return "wi"
    if isinstance(v, float):
        return "wf"
    if isinstance(v, np.generic):
        return v.dtype.name
    return None


def result_type(op: str, a: str, b: Optional[str] = None) -> Optional[str]:
    """The type of `a op b` (or of `op a`) in NumPy, or None if NumPy refuses."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if b is None:
                v = eval(f"{op} x", {"x": _sample(a)})
            else:
                v = eval(f"x {op} y", {"x": _sample(a), "y": _sample(b)})
    except Exception:
        return None
    return _type_of(v)


def kind(t: str) -> str:
    if t in WEAK:
        return {"wi": "i", "wf": "f", "wb": "b"}[t]
    return np.dtype(t).kind  # b i u f


class E:
    """A generated expression: its text, type, whether its value may differ
    by rounding between the oracle and compiled code (`approx`), the range
    of a weak int, and whether it is a float leaf (safe to convert)."""

    __slots__ = ("text", "t", "approx", "rng", "leaf")

    def __init__(self, text: str, t: str, approx: bool = False,
                 rng: Optional[Tuple[int, int]] = None, leaf: bool = False) -> None:
        self.text, self.t, self.approx, self.rng, self.leaf = text, t, approx, rng, leaf


# --------------------------------------------------------------------------
# the generator


class Arr:
    def __init__(self, name: str, dtype: str, shape: List[int], role: str) -> None:
        self.name, self.dtype, self.shape, self.role = name, dtype, shape, role
        self.unit: Optional[int] = None   # the top-level unit that writes it
        self.depth = 0                    # parallel depth of its writes (in a nest)


class Scope:
    """What the statement being generated can see."""

    def __init__(self, unit: int, par: List[Tuple[str, int]], vars_: Dict[str, E],
                 level: int, gpu: bool, nest: Optional["Nest"]) -> None:
        self.unit = unit
        self.par = par          # enclosing parallel loop vars and extents
        self.vars = vars_       # readable locals and loop vars
        self.level = level      # locals assignable here have this level
        self.gpu = gpu          # inside `with parpy.gpu:` (sequential, any index)
        self.nest = nest
        self.own: Dict[str, int] = {}  # locals defined at this level: name -> level
        # the innermost loop around: "for" (sequential), "while", "par" or None
        self.loop: Optional[str] = None

    def child(self, par: Optional[List[Tuple[str, int]]] = None, level: Optional[int] = None
              ) -> "Scope":
        s = Scope(self.unit, self.par if par is None else par, dict(self.vars),
                  self.level if level is None else level, self.gpu, self.nest)
        s.own = dict(self.own)
        s.loop = self.loop
        return s

    @property
    def depth(self) -> int:
        return len(self.par)


class Nest:
    """One top-level parallel loop nest: a thread count and an extent per level."""

    def __init__(self) -> None:
        self.threads: List[int] = []
        self.tpb: List[Optional[int]] = []
        self.extents: List[Tuple[str, int]] = []


def _printf_spec(spec: str) -> Optional[str]:
    """The `%` conversion that formats a value as the f-string field `spec`
    does (`!r`, `:.3f`, ...), or None where `%` has none (`:,`, `:^`)."""
    if spec in ("", "!s"):
        return "%s"
    if spec == "!r":
        return "%r"
    m = re.fullmatch(r":([<>]?)([+#0]?)(\d*)(?:\.(\d+))?([dxefg]?)", spec)
    if m is None:
        return None
    align, flag, width, prec, conv = m.groups()
    if align == "<":
        flag = "-" + flag
    prec = f".{prec}" if prec is not None else ""
    return f"%{flag}{width}{prec}{conv or 's'}"


def _percent_message(items: List[Tuple[str, Optional[Tuple[str, str]]]]) -> str:
    """`"lit %.3f lit %r" % (a, b,)` of a message's literals and fields."""
    text = "".join(lit + (_printf_spec(v[1]) or "" if v else "") for lit, v in items)
    values = "".join(f"{v[0]}, " for _, v in items if v)
    return f'"{text}" % ({values})'


def _format_message(items: List[Tuple[str, Optional[Tuple[str, str]]]],
                    r: random.Random) -> str:
    """`"lit {:.3f} lit {}".format(a, b)`, the fields numbered or not."""
    numbered = r.random() < 0.4
    text, values = "", []
    for lit, v in items:
        text += lit.replace("{", "{{").replace("}", "}}")
        if v:
            text += f"{{{len(values) if numbered else ''}{v[1]}}}"
            values.append(v[0])
    return f'"{text}".format({", ".join(values)})'


def _concat_message(items: List[Tuple[str, Optional[Tuple[str, str]]]],
                    r: random.Random) -> str:
    """`"lit " + str(a) + repr(b) + format(c, ".3f")` (or an f-string of
    one field)."""
    parts = []
    for lit, v in items:
        if lit:
            parts.append(f'"{lit}"')
        if v is None:
            continue
        text, spec = v
        if spec == "!r":
            parts.append(f"repr({text})")
        elif spec.startswith(":"):
            parts.append(f'format({text}, "{spec[1:]}")' if r.random() < 0.6
                         else f'f"{{{text}{spec}}}"')
        else:
            parts.append(f"str({text})")
    return " + ".join(parts)


class Gen:
    def __init__(self, seed: int, avoid: Sequence[str] = (), float16: bool = True) -> None:
        self.seed = seed
        self.r = random.Random(seed)
        # the `row_pairs` variants: a stream of their own, so that every
        # other draw is the seed's as before the feature
        self.pairs_r = random.Random(seed * 7901 + 5)
        # the `run_time_step` loops and the step's value: a stream of their own
        self.step_r = random.Random(seed * 7919 + 11)
        # the features of stop 57: whether each is used at a place and what
        # it generates there come from a stream of its own (`side`)
        self.side_r = {f: random.Random(seed * 7927 + 13 + 17 * j) for j, f in enumerate(
            ("data_while", "helper_tuples", "scalar_updates", "new_math", "sort_search",
             "clips", "none_args", "index_idioms", "run_time_blocks", "check_messages",
             "sorted_items", "masked_where", "int_initial", "message_forms", "spread"))}
        # `check_messages`: whether the program has its one check that may
        # fail, and the checks' count (each message starts `chkN:`)
        self.armed = False
        self.nchecks = 0
        self.avoid = set(avoid)
        self.features: set = set()
        self.lines: List[str] = []
        self.helpers: List[str] = []
        # float types math calls compute in (NumPy's sin of an int16 is a
        # float32): they set the comparison's tolerance too
        self.math_floats: set = set()
        self.arrays: List[Arr] = []
        self.spec: Dict[str, Tuple[int, Optional[int], bool]] = {}
        self.nlabel = 0
        self.nvar = 0
        self.nhelper = 0
        self.in_helper = False
        self.dtypes = DTYPES if float16 else [d for d in DTYPES if d != "float16"]
        r = self.r
        self.sizes = [r.choice([1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 33, 40])
                      for _ in range(3)]
        self.specialize = True
        if "no_specialize" not in self.avoid and r.random() < 0.35:
            self.specialize = False
            self.features.add("no_specialize")
        # scalar arguments: sizes N0..N2, c0 (int), s0 (float), b0 (bool)
        self.scalars: List[Dict[str, Any]] = []
        for k, n in enumerate(self.sizes):
            self.scalars.append({"name": f"N{k}", "kind": "int", "value": n})
        c = r.choice([-6, -3, -1, 0, 1, 2, 5, 7, 11])
        s = r.choice([-0.75, 0.25, 0.5, 1.5, 2.0, 3.25])
        ckind, skind, bkind = "int", "float", "bool"
        if "numpy_scalar" not in self.avoid and r.random() < 0.3:
            ckind = "np." + r.choice(["int8", "int16", "int32", "int64"])
            self.features.add("numpy_scalar")
        if "numpy_scalar" not in self.avoid and r.random() < 0.3:
            skind = "np." + r.choice(["float32", "float64"] + (["float16"] if float16 else []))
            self.features.add("numpy_scalar")
        self.scalars.append({"name": "c0", "kind": ckind, "value": c})
        self.scalars.append({"name": "s0", "kind": skind, "value": s})
        self.scalars.append({"name": "b0", "kind": bkind, "value": r.random() < 0.5})
        self.step = self.step_r.choice([1, 2, 3, -1, -2, -3])
        self.scalars.append({"name": "st0", "kind": "int", "value": self.step})
        self.vals_mode = r.choice(["small", "mid"])
        # the optional parameters of `none_args` (a stream of their own):
        # an array `w0` and a float `z0`, each None or a value
        self.optionals: List[Dict[str, Any]] = []
        opt_r = random.Random(seed * 7937 + 19)
        if "none_args" not in self.avoid and opt_r.random() < 0.25:
            w_none, z_none = opt_r.random() < 0.5, opt_r.random() < 0.5
            z_omit = z_none and opt_r.random() < 0.5
            self.optionals = [
                {"name": "w0", "array": True, "role": "opt",
                 "dtype": opt_r.choice([d for d in self.dtypes if d != "bool"]),
                 "shape": [opt_r.choice(self.sizes)], "none": w_none,
                 "omit": w_none and z_omit and opt_r.random() < 0.5},
                {"name": "z0", "array": False, "kind": "float",
                 "value": None if z_none else opt_r.choice([0.5, -1.25, 2.0, 3.5]),
                 "none": z_none, "omit": z_omit}]

    # -- helpers ---------------------------------------------------------

    def on(self, feature: str, p: float) -> bool:
        """Whether to use a feature (probability p), unless avoided."""
        if feature in self.avoid or self.r.random() >= p:
            return False
        self.features.add(feature)
        return True

    def side(self, feature: str, p: float) -> bool:
        """Whether to use `feature` here (probability p), drawn from its own
        stream, so that the rest of the program is the seed's as before."""
        if feature in self.avoid or self.side_r[feature].random() >= p:
            return False
        self.features.add(feature)
        return True

    @contextlib.contextmanager
    def drawing_from(self, feature: str) -> Any:
        """Every draw inside from `feature`'s own stream."""
        saved, self.r = self.r, self.side_r[feature]
        try:
            yield
        finally:
            self.r = saved

    def fresh(self, prefix: str) -> str:
        self.nvar += 1
        return f"{prefix}{self.nvar}"

    def scalar_exprs(self) -> List[E]:
        out: List[E] = []
        if self.in_helper:
            return out
        for s in self.scalars:
            k, v = s["kind"], s["value"]
            if s["name"] == "st0":
                continue  # (the step of `run_time_step` loops only)
            if k == "int":
                out.append(E(s["name"], "wi", rng=(v, v)))
            elif k == "float":
                out.append(E(s["name"], "wf", leaf=True))
            elif k == "bool":
                out.append(E(s["name"], "wb"))
            else:
                out.append(E(s["name"], k[3:], leaf=kind(k[3:]) == "f"))
        return out

    def new_array(self, dtype: Optional[str], shape: List[int], role: str) -> Arr:
        dt = dtype or self.r.choice(self.dtypes)
        name = f"{'x' if role == 'in' else 'o'}{len(self.arrays)}"
        a = Arr(name, dt, shape, role)
        self.arrays.append(a)
        return a

    def label(self, nest: Optional[Nest], level: int, reduction: bool = False) -> str:
        """A new label for a parallel statement at `level` of `nest`."""
        self.nlabel += 1
        name = f"L{self.nlabel}"
        if nest is None:
            return name
        while len(nest.threads) <= level:
            nest.threads.append(self.r.choice(THREADS))
            nest.tpb.append(self.r.choice(TPB) if self.r.random() < 0.25 else None)
        self.spec[name] = (nest.threads[level], nest.tpb[level], reduction)
        return name

    # -- expressions -----------------------------------------------------

    def literal(self, k: str) -> E:
        r = self.r
        if k == "b":
            return E(r.choice(["True", "False"]), "wb")
        if k == "f":
            return E(r.choice(["0.5", "0.25", "1.5", "2.0", "3.0", "-0.75", "0.125"]), "wf",
                     leaf=True)
        v = r.choice([0, 1, 2, 3, 5, 7, 10, 100, -1, -3])
        return E(str(v) if v >= 0 else f"({v})", "wi", rng=(v, v))

    def index_any(self, sc: Scope, extent: int) -> E:
        """An index in [0, extent) (or a negative one counting from the end)."""
        r = self.r
        ints = [e for e in sc.vars.values() if e.t == "wi" and e.rng is not None]
        x = r.random()
        if x < 0.3:
            v = r.randrange(extent)
            if v > 0 and self.on("neg_index", 0.2):
                return E(f"({v - extent})", "wi", rng=(v - extent, v - extent))
            return E(str(v), "wi", rng=(v, v))
        if x < 0.55:
            fits = [e for e in ints if e.rng[0] >= 0 and e.rng[1] < extent]
            if fits:
                return r.choice(fits)
        if x < 0.65 and self.scalars[3]["kind"] == "int" and "neg_index" not in self.avoid:
            c = self.scalars[3]["value"]
            if -extent <= c < extent:
                if c < 0:
                    self.features.add("neg_index")
                return E("c0", "wi", rng=(c, c))
        base = r.choice(ints) if ints else E("c0", "wi", rng=(0, 0))
        off = r.randrange(4)
        ck = self.scalars[3]["kind"]
        if base.text == "c0" and ck != "int" and extent + 3 > np.iinfo(np.dtype(ck[3:])).max:
            # (a NumPy c0 takes a modulus its type cannot hold as Python int)
            base = E("int(c0)", "wi")
        return E(f"(({base.text} + {off}) % {extent})", "wi", rng=(0, extent - 1))

    def read_array(self, sc: Scope, want: Optional[str]) -> Optional[E]:
        """An element read of a readable array of kind `want`."""
        cands = []
        for a in self.arrays:
            if a.role == "atomic":
                continue  # read while other threads update it: a race
            if want is not None and kind(a.dtype) != want and not (
                    want == "i" and kind(a.dtype) == "u"):
                continue
            if a.role == "out" and a.unit == sc.unit and sc.nest is not None:
                # own slab only: the enclosing parallel variables first
                if len(sc.par) < a.depth and a.depth > 0 and len(sc.par) == 0:
                    continue
            cands.append(a)
        if not cands:
            return None
        a = self.r.choice(cands)
        idx = []
        own = a.role == "out" and a.unit == sc.unit and sc.nest is not None
        for d, n in enumerate(a.shape):
            if own and d < min(a.depth, sc.depth):
                idx.append(sc.par[d][0])
            else:
                idx.append(self.index_any(sc, n).text)
        text = f"{a.name}[{', '.join(idx)}]"
        fk = kind(a.dtype) == "f"
        return E(text, a.dtype, approx=fk and a.role == "out", leaf=fk and a.role == "in")

    def leaf(self, sc: Scope, k: str, exact: bool) -> E:
        r = self.r
        opts: List[E] = []
        for e in sc.vars.values():
            if kind(e.t) == k or (k == "i" and kind(e.t) == "u"):
                if not (exact and e.approx):
                    opts.append(e)
        for e in self.scalar_exprs():
            if kind(e.t) == k or (k == "i" and kind(e.t) == "u"):
                opts.append(e)
        x = r.random()
        if x < 0.45:
            a = self.read_array(sc, k)
            if a is not None and not (exact and a.approx):
                return a
        if x < 0.8 and opts:
            return r.choice(opts)
        return self.literal(k)

    def fits(self, w: E, t: str) -> bool:
        """Whether weak int `w` may meet strong type `t` (NumPy raises when
        a Python int is out of the range of an integer type)."""
        if w.t != "wi" or t in WEAK or kind(t) not in "iu":
            return True
        if w.rng is None:
            return False
        info = np.iinfo(np.dtype(t))
        return info.min <= w.rng[0] and w.rng[1] <= info.max

    def spell(self, op: str, a: E, b: Optional[E] = None) -> str:
        """`a op b` (`op a`), or as the ufunc where an operand is a NumPy
        value (`ufunc_names`): the same result type then."""
        strong = a.t not in WEAK or (b is not None and b.t not in WEAK)
        unary = {"-": "negative", "~": "invert"}
        name = UFUNC_OF.get(op) if b is not None else unary.get(op)
        if name and strong and self.on("ufunc_names", 0.15):
            return f"np.{name}({a.text}, {b.text})" if b is not None else f"np.{name}({a.text})"
        return f"({a.text} {op} {b.text})" if b is not None else f"({op}{a.text})"

    def combine(self, op: str, a: E, b: E) -> Optional[E]:
        t = result_type(op, a.t, b.t)
        if t is None or not self.fits(a, b.t) or not self.fits(b, a.t):
            return None
        rng = None
        if t == "wi" and a.rng and b.rng and op in "+-*":
            vals = [eval(f"x {op} y", {"x": x, "y": y}) for x in a.rng for y in b.rng]
            rng = (min(vals), max(vals))
            if max(abs(rng[0]), abs(rng[1])) > 10**6:
                return None
        return E(self.spell(op, a, b), t, approx=a.approx or b.approx, rng=rng)

    def expr(self, sc: Scope, k: str, depth: int, exact: bool = False) -> E:
        """An expression of kind k ('i' integer, 'f' float, 'b' bool)."""
        for _ in range(8):
            e = self._expr(sc, k, depth, exact)
            if e is not None and (kind(e.t) == k or (k == "i" and kind(e.t) == "u")):
                return e
        return self.literal(k)

    def _expr(self, sc: Scope, k: str, depth: int, exact: bool) -> Optional[E]:
        r = self.r
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(sc, k, exact)
        if k == "i":
            return self.int_expr(sc, depth, exact)
        if k == "f":
            return self.float_expr(sc, depth, exact)
        return self.bool_expr(sc, depth)

    def safe_divisor(self, sc: Scope, depth: int) -> E:
        d = self.expr(sc, "i", depth - 1)
        if d.t == "wi":
            return E(f"(({d.text} & 7) + 1)", "wi", rng=(1, 8))
        return E(f"(({d.text} & 7) + 1)", d.t)

    def int_expr(self, sc: Scope, depth: int, exact: bool) -> Optional[E]:
        if self.side("new_math", 0.03):
            with self.drawing_from("new_math"):
                e = self.new_math_expr(sc, "i", max(depth, 1))
            if e is not None:
                return e
        r = self.r
        x = r.random()
        if x < 0.35:
            op = r.choice(["+", "-", "*", "&", "|", "^"])
            return self.combine(op, self.expr(sc, "i", depth - 1), self.expr(sc, "i", depth - 1))
        if x < 0.45:
            a = self.expr(sc, "i", depth - 1)
            bits = 8 * (np.dtype(a.t).itemsize if a.t not in WEAK else 1)
            cnt = r.randrange(min(bits, 8))
            return self.combine(r.choice(["<<", ">>"]), a, E(str(cnt), "wi", rng=(cnt, cnt)))
        if x < 0.55:
            op = r.choice(["//", "%"])
            return self.combine(op, self.expr(sc, "i", depth - 1), self.safe_divisor(sc, depth))
        if x < 0.62:
            a = self.expr(sc, "i", depth - 1)
            op = r.choice(["-", "~"])
            if a.t == "wi" and a.rng:
                rng = (-a.rng[1], -a.rng[0]) if op == "-" else (~a.rng[1], ~a.rng[0])
                return E(f"({op}{a.text})", "wi", rng=rng)
            t = result_type(op, a.t)
            return None if t is None else E(self.spell(op, a), t)
        if x < 0.64 and self.on("int_powers", 0.5):
            # NumPy's integer power (wrapping) of a small exponent
            a = self.expr(sc, "i", depth - 1)
            k = r.randrange(0, 4)
            # (of NumPy integers only: a Python int's power has no bound)
            if a.t in WEAK:
                return None
            return self.combine("**", a, E(str(k), "wi", rng=(k, k)))
        if x < 0.7:
            f = r.choice(["min", "max", "parpy.builtin.minimum", "parpy.builtin.maximum"])
            a, b = self.expr(sc, "i", depth - 1), self.expr(sc, "i", depth - 1)
            e = self.combine("+", a, b)
            if e is None:
                return None
            rng = None
            if e.t == "wi" and a.rng and b.rng:
                rng = (min(a.rng[0], b.rng[0]), max(a.rng[1], b.rng[1]))
            return E(f"{f}({a.text}, {b.text})", e.t, rng=rng)
        if x < 0.8:
            # a conversion: from an int (wraps) or a float leaf (in range)
            t = r.choice(INTS)
            if r.random() < 0.5:
                a = self.expr(sc, "i", depth - 1)
            else:
                a = self.leaf(sc, "f", True)
                if not a.leaf:
                    return None
                if kind(t) == "u":
                    a = E(f"abs({a.text})", a.t)
            return E(f"parpy.builtin.convert({a.text}, parpy.types.{_short(t)})", t)
        if x < 0.85:
            return self.reduce_expr(sc, "i")
        if x < 0.9:
            return self.helper_call(sc, "i", depth)
        if x < 0.95:
            c = self.bool_expr(sc, depth - 1)
            a = self.expr(sc, "i", depth - 1)
            b = self.expr(sc, "i", depth - 1)
            if a.t != b.t:
                if a.t in WEAK:
                    return None
                b = E(f"parpy.builtin.convert({b.text}, parpy.types.{_short(a.t)})", a.t)
            return E(f"({a.text} if {c.text} else {b.text})", a.t, rng=None if a.t != "wi"
                     else (a.rng and b.rng and (min(a.rng[0], b.rng[0]), max(a.rng[1], b.rng[1]))))
        return self.leaf(sc, "i", exact)

    def float_expr(self, sc: Scope, depth: int, exact: bool) -> Optional[E]:
        if self.side("new_math", 0.03):
            with self.drawing_from("new_math"):
                e = self.new_math_expr(sc, "f", max(depth, 1))
            if e is not None and not (exact and e.approx):
                return e
        r = self.r
        if exact:
            x = r.random()
            if x < 0.3:
                a = self.expr(sc, "i", depth - 1)
                t = r.choice(["float32", "float64"] + (["float16"] if "float16" in self.dtypes
                                                       else []))
                if t == "float16" and a.t not in ("int8", "uint8", "bool", "wb"):
                    t = "float32"
                return E(f"parpy.builtin.convert({a.text}, parpy.types.{_short(t)})", t)
            a = self.leaf(sc, "f", True)
            if x < 0.5:
                return E(f"abs({a.text})", a.t if a.t != "wb" else "wi", leaf=a.leaf)
            return a
        x = r.random()
        if x < 0.4:
            op = r.choice(["+", "-", "*"])
            a = self.expr(sc, "f", depth - 1)
            b = self.expr(sc, r.choice("fi"), depth - 1)
            if r.random() < 0.5:
                a, b = b, a
            e = self.combine(op, a, b)
            if e is not None:
                e.approx = True
            return e
        if x < 0.45 and self.on("int_powers", 0.3):
            a = self.expr(sc, "f", depth - 1)
            k = r.randrange(1, 4)
            return self.combine("*", a, E(f"(2 ** -{k})", "wf"))
        if x < 0.5:
            a = self.expr(sc, "f", depth - 1)
            b = self.expr(sc, "f", depth - 1)
            e = self.combine("/", a, E(f"(abs({b.text}) + 1.0)", b.t if b.t != "wb" else "wf"))
            if e is not None:
                e.approx = True
            return e
        if x < 0.55 and self.on("float_floordiv", 0.5):
            a = self.leaf(sc, "f", True)
            d = r.choice(["0.5", "1.5", "2.0", "3.0"])
            e = self.combine(r.choice(["//", "%"]), a, E(d, "wf"))
            if e is not None:
                e.approx = True
            return e
        if x < 0.72:
            return self.math_call(sc, depth)
        if x < 0.8:
            a = self.expr(sc, "i", depth - 1)
            e = E(f"float({a.text})", "wf", approx=False)
            return e
        if x < 0.9:
            return self.reduce_expr(sc, "f")
        if x < 0.95:
            return self.helper_call(sc, "f", depth)
        f = r.choice(["min", "max", "parpy.builtin.maximum"]
                     + (["np.fmax", "np.fmin"] if self.on("more_math", 0.5) else []))
        a, b = self.expr(sc, "f", depth - 1), self.expr(sc, "f", depth - 1)
        e = self.combine("+", a, b)
        if e is None:
            return None
        # (a NumPy function of Python numbers alone gives a NumPy value)
        t = {"wi": "int64", "wf": "float64", "wb": "bool"}.get(e.t, e.t) if f.startswith("np.") else e.t
        return E(f"{f}({a.text}, {b.text})", t, approx=a.approx or b.approx)

    def math_call(self, sc: Scope, depth: int) -> Optional[E]:
        r = self.r
        if r.random() < 0.25 and self.on("math_narrow_int", 0.5):
            a = self.expr(sc, "i", depth - 1)
        else:
            a = self.expr(sc, "f", depth - 1)
        f = r.choice(["sqrt", "exp", "log", "sin", "cos", "tanh", "atan2", "pow", "abs",
                      "floor", "ceil"]
                     + (["log10", "log2", "exp2", "asin", "acos", "atan", "sinh", "cosh",
                         "asinh", "acosh", "atanh", "trunc", "sign", "square"]
                        if self.on("more_math", 0.4) else []))
        if f in ("floor", "ceil", "trunc", "sign"):
            if kind(a.t) != "f":
                return None
            a = self.leaf(sc, "f", True)  # discontinuous: an exact argument only
            text = f"parpy.math.{f}({a.text})"
        elif f == "sqrt":
            text = f"parpy.math.sqrt(abs({a.text}))"
        elif f in ("log", "log10", "log2"):
            text = f"parpy.math.{f}(abs({a.text}) + 1.0)"
        elif f in ("exp", "exp2", "sinh", "cosh"):
            text = f"parpy.math.{f}(min(max({a.text}, -4.0), 4.0))"
        elif f in ("asin", "acos", "atanh"):
            # inside the domain; atanh(+-1) is infinite
            text = f"parpy.math.{f}(min(max({a.text}, -0.875), 0.875))"
        elif f == "acosh":
            text = f"parpy.math.acosh(abs({a.text}) + 1.0)"
        elif f == "square":
            text = f"np.square({a.text})"
        elif f == "atan2":
            b = self.expr(sc, "f", depth - 1)
            text = f"parpy.math.atan2(abs({a.text}) + 0.5, {b.text})"
        elif f == "pow":
            text = f"parpy.math.pow(abs({a.text}) + 0.5, {r.choice(['2.0', '1.5', '0.5'])})"
        elif f in ("sin", "cos") and a.approx:
            # a rounded argument of large magnitude (a reordered sum) moves
            # sin/cos by its absolute error, far beyond the comparison's
            # tolerance (seeds 23831, 24105): bound it, as exp's is
            text = f"parpy.math.{f}(min(max({a.text}, -8.0), 8.0))"
        else:
            text = f"parpy.math.{f}({a.text})"
        t = self._eval_type(text, a)
        if t is None:
            return None
        self.math_floats.add(t)
        return E(text, t, approx=True)

    def _eval_type(self, text: str, a: E) -> Optional[str]:
        """The type of `text`, whose only free operand is `a` (replaced by a
        sample of its type) and possibly a second one of the same type."""
        import parpy  # noqa: F401  (for eval)
        from . import _pymode
        env = {"parpy": parpy, "np": np, "min": _pymode._OVERRIDES["min"],
               "max": _pymode._OVERRIDES["max"], "__SAMPLE__": _sample(a.t)}
        expr = text.replace(a.text, "__SAMPLE__")
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = eval(expr, env)
        except Exception:
            return None
        return _type_of(v)

    def bool_expr(self, sc: Scope, depth: int) -> E:
        if self.side("new_math", 0.03):
            with self.drawing_from("new_math"):
                e = self.new_math_expr(sc, "b", max(depth, 1))
            if e is not None:
                return e
        r = self.r
        x = r.random()
        if depth <= 0 or x < 0.15:
            return self.leaf(sc, "b", True)
        if x < 0.6:
            k = r.choice("iif")
            a = self.expr(sc, k, depth - 1, exact=True)
            b = self.expr(sc, k, depth - 1, exact=True)
            op = r.choice(["<", "<=", ">", ">=", "==", "!="])
            if kind(a.t) == "u" and b.t == "wi" and b.rng and b.rng[0] < 0:
                if not self.on("uint_cmp_negative", 0.5):
                    return self.leaf(sc, "b", True)
            t = result_type(op, a.t, b.t)
            if t is None:
                return self.leaf(sc, "b", True)
            return E(self.spell(op, a, b), t)
        if x < 0.8:
            a, b = self.bool_expr(sc, depth - 1), self.bool_expr(sc, depth - 1)
            ops = ["&", "|", "^"]
            if self.on("bool_arith", 0.15):
                ops = ["+", "*"]
            op = r.choice(ops)
            t = result_type(op, a.t, b.t)
            if t is None or kind(t) != "b":
                return a
            return E(self.spell(op, a, b), t)
        if x < 0.88 and self.on("membership", 0.4):
            return self.membership(sc, depth)
        if x < 0.88:
            a = self.bool_expr(sc, depth - 1)
            if a.t != "wb" and self.on("bool_invert", 0.3):
                return E(f"(~{a.text})", a.t)
            return E(f"({a.text} != {r.choice(['True', 'False'])})", result_type("!=", a.t, "wb")
                     or "wb")
        return self.leaf(sc, "b", True)

    def membership(self, sc: Scope, depth: int) -> E:
        """`a in (c1, c2)`, `a not in [..]`, `a in range(lo, hi, step)` of
        an integer `a`, or `a in s` of a slice of its kind: a Python
        bool."""
        r = self.r
        a = self.expr(sc, "i", max(depth - 1, 0), exact=True)
        neg = "not " if r.random() < 0.3 else ""
        y = r.random()
        if y < 0.4:
            items = [str(r.randrange(-4, 9)) for _ in range(r.randrange(1, 5))]
            within = f"({', '.join(items)},)" if r.random() < 0.5 else f"[{', '.join(items)}]"
        elif y < 0.8:
            lo, step = r.randrange(-6, 6), r.choice([1, 1, 2, 3, -1, -2])
            hi = lo + step * r.randrange(0, 8)
            within = f"range({lo}, {hi}, {step})" if step != 1 or r.random() < 0.5 \
                else f"range({lo}, {hi})"
        else:
            sl = self.slice_of(sc, "i", r.randrange(1, 9))
            if sl is None:
                return self.leaf(sc, "b", True)
            within = sl[0]
        return E(f"({a.text} {neg}in {within})", "wb")

    def cond(self, sc: Scope) -> str:
        """A condition for `if`/`while`/conditional expressions (exact)."""
        r = self.r
        a = self.bool_expr(sc, 2)
        if r.random() < 0.2:
            b = self.bool_expr(sc, 1)
            return f"({a.text} {r.choice(['and', 'or'])} not {b.text})"
        return a.text

    # -- reductions and slices -------------------------------------------

    def slice_of(self, sc: Scope, k: str, length: int) -> Optional[Tuple[str, str, bool]]:
        """A slice of `length` elements of a readable array of kind k, along
        its last dimension: (text, dtype, approx)."""
        cands = [a for a in self.arrays
                 if a.role != "atomic"
                 and (kind(a.dtype) == k or (k == "i" and kind(a.dtype) == "u"))
                 and a.shape[-1] >= length
                 and not (a.role == "out" and a.unit == sc.unit and sc.nest is not None
                          and a.depth > sc.depth)]
        if not cands:
            return None
        a = self.r.choice(cands)
        own = a.role == "out" and a.unit == sc.unit and sc.nest is not None
        idx = []
        for d, n in enumerate(a.shape[:-1]):
            if own and d < min(a.depth, sc.depth):
                idx.append(sc.par[d][0])
            else:
                idx.append(self.index_any(sc, n).text)
        if own and len(a.shape) - 1 < min(a.depth, sc.depth):
            return None
        n, fk = a.shape[-1], kind(a.dtype) == "f"
        if n > length and self.on("chains", 0.35):
            # a longer slice, then `length` of its elements
            m = self.r.randrange(length + 1, n + 1)
            idx.append(self.slice_text(n, m, spelled=True))
            inner = self.slice_text(m, length, spelled=True)
            return f"{a.name}[{', '.join(idx)}][{inner}]", a.dtype, fk and a.role == "out"
        idx.append(self.slice_text(n, length, spelled=True))
        return f"{a.name}[{', '.join(idx)}]", a.dtype, fk and a.role == "out"

    def axis_reduce_of(self, sc: Scope, k: str,
                       length: Optional[int] = None) -> Optional[Tuple[str, str, bool]]:
        """A reduction along one axis of a 2-D slice (the last two
        dimensions of a readable array of kind k) that leaves `length`
        elements (any number when None): (text, dtype, approx), or None."""
        r = self.r
        if self.on("matmul", 0.5):
            return self.matmul_of(sc, k, length)
        keep_last = r.random() < 0.5
        kept, red = (-1, -2) if keep_last else (-2, -1)
        cands = [a for a in self.arrays
                 if a.role == "in" and len(a.shape) >= 2
                 and (kind(a.dtype) == k or (k == "i" and kind(a.dtype) == "u"))
                 and a.shape[kept] >= (length or 1)]
        if not cands:
            return None
        a = r.choice(cands)
        if length is None:
            length = r.randrange(1, min(a.shape[kept], 32) + 1)
        m = r.randrange(1, min(a.shape[red], 16) + 1)
        dt = a.dtype
        ops = ["sum", "max", "min", "mean"] + (["prod"] if kind(dt) != "f" or m <= 8 else [])
        op = r.choice(ops)
        if op == "mean" and k != "f":
            return None  # (a float64 mean in an integer statement)
        if op == "sum" and dt in ("int8", "int16", "int32", "uint8", "uint16", "uint32", "bool") \
                and not self.on("reduce_sum_narrow", 0.5):
            return None
        if dt == "float16" and not self.on("f16_reduce", 0.5):
            return None
        if dt == "uint64" and op in ("max", "min") and not self.on("reduce_u64_minmax", 0.5):
            return None
        idx = [self.index_any(sc, n).text for n in a.shape[:-2]]
        lens = {kept % len(a.shape): length, red % len(a.shape): m}
        for d in (len(a.shape) - 2, len(a.shape) - 1):
            idx.append(self.slice_text(a.shape[d], lens[d], spelled=True))
        ax = r.choice(["0", "-2"] if keep_last else ["1", "-1"])
        text = f"{a.name}[{', '.join(idx)}]"
        sample = np.ones((2, 2), dtype=np.dtype(dt))
        with np.errstate(all="ignore"):
            t = _type_of(getattr(np, op)(sample, axis=0)[0]) or dt
        spelled = f"np.{op}({text}, axis={ax})" if r.random() < 0.7 else f"{text}.{op}(axis={ax})"
        return spelled, t, kind(dt) == "f" or op == "mean"

    def matmul_of(self, sc: Scope, k: str,
                  length: Optional[int] = None) -> Optional[Tuple[str, str, bool]]:
        """A product of a 1-D slice and a 2-D slice of readable arrays of
        one dtype of kind k (not bool or float16) that leaves `length`
        elements (any number when None): `v @ m` or `m @ v`, as
        `np.dot`/`np.matmul` too, or spelled out with a new axis and a sum
        along an axis. (text, dtype, approx), or None."""
        r = self.r
        mats = [a for a in self.arrays
                if a.role == "in" and len(a.shape) >= 2 and a.dtype not in ("bool", "float16")
                and (kind(a.dtype) == k or (k == "i" and kind(a.dtype) == "u"))]
        if not mats:
            return None
        m = r.choice(mats)
        vec_right = r.random() < 0.5  # `m @ v`: m's rows are the result
        kept, red = (-2, -1) if vec_right else (-1, -2)
        if length is None:
            length = r.randrange(1, min(m.shape[kept], 16) + 1)
        if m.shape[kept] < length:
            return None
        inner = r.randrange(1, min(m.shape[red], 12) + 1)
        vecs = [a for a in self.arrays if a.role == "in" and a.dtype == m.dtype and a.shape[-1] >= inner]
        if not vecs:
            return None
        v = r.choice(vecs)
        vt = f"{v.name}[{', '.join([self.index_any(sc, n).text for n in v.shape[:-1]] + [self.slice_text(v.shape[-1], inner, spelled=True)])}]"
        lens = {len(m.shape) + kept: length, len(m.shape) + red: inner}
        idx = [self.index_any(sc, n).text for n in m.shape[:-2]]
        idx += [self.slice_text(m.shape[d], lens[d], spelled=True) for d in (len(m.shape) - 2, len(m.shape) - 1)]
        mt = f"{m.name}[{', '.join(idx)}]"
        a, b = (mt, vt) if vec_right else (vt, mt)
        x = r.random()
        if x < 0.5:
            text = f"{a} @ {b}"
        elif x < 0.75:
            text = f"np.{r.choice(['dot', 'matmul'])}({a}, {b})"
        elif vec_right:
            text = f"np.sum({mt} * {vt}, axis=-1)"
        else:
            text = f"np.sum({vt[:-1]}, None] * {mt}, axis=0)"
        t = m.dtype
        if text.startswith("np.sum("):
            # (NumPy's sum of narrow integers is in the default integer)
            t = _type_of(np.sum(np.ones((2, 2), dtype=np.dtype(t)), axis=0)[0]) or t
        return text, t, kind(m.dtype) == "f"

    def slice_text(self, n: int, length: int, spelled: bool = False) -> str:
        """A slice selecting `length` (<= n) elements of a dimension of n:
        `lo:hi` (`spelled`: also `:`, `lo:` and `-k:`), or with the
        "strided_slices" feature a step, negative ones too, with bounds
        counted from either end or left out where that selects the same."""
        r = self.r
        if length < n and self.on("strided_slices", 0.3):
            big = n if length == 1 else (n - 1) // (length - 1)
            step = r.randrange(1, big + 1) * r.choice([1, -1])
            span = (length - 1) * abs(step)  # first to last selected element
            first = r.randrange(n - span) if step > 0 else r.randrange(span, n)
            # any stop past the last element and before the next one
            stop = first + step * (length - 1) + (1 if step > 0 else -1) * r.randrange(1, abs(step) + 1)
            start = str(first - n) if r.random() < 0.3 else str(first)
            if step > 0:
                stop_s = "" if stop >= n and r.random() < 0.5 else str(min(stop, n))
            elif stop < 0:
                stop_s = ""  # (-1 would count from the end)
            else:
                stop_s = str(stop - n) if r.random() < 0.3 else str(stop)
            if (first == 0 and step > 0 or first == n - 1 and step < 0) and r.random() < 0.5:
                start = ""
            return f"{start}:{stop_s}:{step}"
        lo = r.randrange(n - length + 1)
        if lo == 0 and length == n and (not spelled or r.random() < 0.5):
            return ":"
        if spelled and lo + length == n and r.random() < 0.5:
            return f"{lo}:" if r.random() < 0.5 else f"{lo - n}:"
        return f"{lo}:{lo + length}"

    def view_of(self, text: str, nd: int, reduced: bool) -> str:
        """`text` (a subscript with `nd` sliced dimensions) as NumPy's view
        of it, or a roll of it, with the same elements (`views`); with
        `reduced` (all of it reduced), also its transpose and the diagonal
        of its last two dimensions."""
        r = self.r
        if not self.on("views", 0.3):
            return text
        axis = f", {r.randrange(-nd, nd)}" if nd > 1 or r.random() < 0.3 else ""
        shift = r.randrange(-40, 41)
        views = [f"np.flip({text})", f"np.flip({text}{axis})" if axis else f"np.flip({text})",
                 f"np.roll({text}, {shift}{axis})"]
        if reduced and nd > 1:
            views += [f"{text}.T", f"np.diagonal({text}, 0, -2, -1)"]
        if reduced and nd == 2 and self.on("permutes", 0.8):
            views += [f"np.swapaxes({text}, 0, 1)", f"{text}.mT", f"np.moveaxis({text}, 0, -1)",
                      f"np.transpose({text}, (1, 0))", f"{text}.swapaxes(-1, -2)"]
        return r.choice(views)

    def multi_slice_of(self, sc: Scope, k: str) -> Optional[Tuple[str, str, bool]]:
        """A slice of 2 or 3 dimensions (each up to 24 long) of a readable
        array of kind k, its other dimensions indexed: (text, dtype,
        approx), or None."""
        r = self.r
        cands = [a for a in self.arrays
                 if a.role == "in" and len(a.shape) >= 2
                 and (kind(a.dtype) == k or (k == "i" and kind(a.dtype) == "u"))]
        if not cands:
            return None
        a = r.choice(cands)
        nd = r.randint(2, min(3, len(a.shape)))
        sliced = set(r.sample(range(len(a.shape)), nd))
        idx = [self.slice_text(n, r.randrange(1, min(n, 24) + 1), spelled=True) if d in sliced
               else self.index_any(sc, n).text for d, n in enumerate(a.shape)]
        text = self.view_of(f"{a.name}[{', '.join(idx)}]", nd, True)
        return text, a.dtype, kind(a.dtype) == "f"

    def reduce_expr(self, sc: Scope, k: str, label: Optional[str] = None) -> Optional[E]:
        r = self.r
        n = r.choice([1, 2, 3, 5, 8, 16, 32])
        s = self.slice_of(sc, k, n)
        axis = multi = False
        if self.on("axis_reduce", 0.5):
            reduced = self.axis_reduce_of(sc, k)
            axis = reduced is not None
            s = reduced or s
        elif self.on("multi_reduce", 0.3):
            several = self.multi_slice_of(sc, k)
            multi = several is not None
            s = several or s
        if s is None:
            return None
        text, dt, approx = s
        op = r.choice(["sum", "max", "min", "prod"] if kind(dt) != "f" or n <= 8
                      else ["sum", "max", "min"])
        if op == "sum" and dt in ("int8", "int16", "int32", "uint8", "uint16", "uint32", "bool"):
            if not self.on("reduce_sum_narrow", 0.5):
                return None
        if op in ("max", "min") and dt == "uint64" and not self.on("reduce_u64_minmax", 0.5):
            return None
        if dt == "float16" and not self.on("f16_reduce", 0.5):
            return None
        if dt == "bool" and op == "prod":
            return None
        if label is None and op in ("max", "min") and not axis and not multi and 2 <= n <= 8 \
                and dt != "bool" and self.side("spread", 0.3):
            # Python's max / min of the slice's elements spread as its
            # arguments (`max(*s)`)
            return E(f"{op}(*{text})", dt, approx=approx)
        # (Python's `sum` of a 2-D slice adds its rows: arrays)
        if label is None and op in ("sum", "prod") and not axis and not multi \
                and self.on("generators", 0.35):
            # Python's sum (`math.prod`'s product) of the elements, in order
            # and in their type
            cond = f" if v > {r.choice(['0', '1'])}" if kind(dt) in "iuf" and r.random() < 0.4 else ""
            t = "int64" if dt == "bool" else dt
            # (a list comprehension is the same loop; `math.prod` of the
            # slice itself too)
            gen = f"v for v in {text}{cond}"
            gen = f"[{gen}]" if r.random() < 0.3 else gen
            if op == "prod":
                gen = text if not cond and r.random() < 0.4 else gen
                return E(f"math.prod({gen})", t, approx=kind(dt) == "f" or approx)
            return E(f"sum({gen})", t, approx=kind(dt) == "f" or approx)
        if label is None and not axis and not multi and kind(dt) in "iuf" \
                and self.on("order_stats", 0.25):
            f = r.choice(["median", "percentile", "quantile", "argmax", "argmin"])
            if f in ("argmax", "argmin"):
                return E(f"np.{f}({text})", "int64", approx=approx)
            q = {"median": "", "percentile": f", {r.choice(['0', '25', '50', '90.5', '100'])}",
                 "quantile": f", 0.{r.randrange(10)}"}[f]
            with np.errstate(all="ignore"):
                t = _type_of(np.median(np.ones(2, dtype=np.dtype(dt))))
            return E(f"np.{f}({text}{q})", t or dt, approx=approx)
        if label is None and not axis and not multi and kind(dt) in "iuf" \
                and self.on("interp", 0.3):
            # a number looked up in the slice (sorted or not) and another
            # slice of its length: NumPy's search and formula in float64
            fp = self.slice_of(sc, r.choice("if"), n)
            if fp is not None and kind(fp[1]) in "iuf":
                x = self.leaf(sc, r.choice("if"), True)
                return E(f"np.interp({x.text}, {text}, {fp[0]})", "float64",
                         approx=approx or fp[2] or x.approx)
        if not axis and not multi:
            if label is None and n >= 2 and kind(dt) in "iuf" and self.on("views", 0.15):
                # an element of a computed array: the expression there (no
                # reduction: `stmt_reduce` gives it no label)
                k = r.randrange(-(n - 1), n - 1)
                elem = r.choice([f"np.diff({text})[{k}]", f"({text} * 2)[{k}]"])
                return E(elem, dt, approx=approx)
            text = self.view_of(text, 1, True)
        if r.random() < 0.3 and kind(dt) in "iuf":
            text = f"{text} * {r.choice(['2', '3'])}"
        elif kind(dt) in "iuf" and self.on("helper_in_reduce", 0.2):
            # each element calls a helper (converted to the element type, so
            # the reduction's type is the one of `text * 2`)
            h = self.helper_call(sc, "f" if kind(dt) == "f" else "i", 2)
            if h is not None:
                text = f"{text} * parpy.builtin.convert({h.text}, parpy.types.{_short(dt)})"
                approx = approx or h.approx
        ns = r.choice(["parpy.operators", "parpy.reduce"])
        full = f"{ns}.{op}({text})" if r.random() < 0.9 else f"parpy.sum({text})"
        if full.startswith("parpy.sum"):
            op = "sum"
        elif self.on("keywords", 0.2):
            # NumPy's spelling, with keywords at their defaults
            kws = r.sample(["axis=None", "out=None", "keepdims=False"], r.randrange(1, 3))
            full = f"np.{op}({text}, {', '.join(kws)})"
        elif not axis and not multi and self.on("ufunc_methods", 0.15):
            full = f"np.{UFUNC_OF_REDUCTION[op]}.reduce({text})"
        sample = np.ones(2, dtype=np.dtype(dt))
        with np.errstate(all="ignore"):
            scaled = any(m in text for m in ("* 2", "* 3", "* parpy.builtin.convert(h"))
            v = getattr(np, op)(sample * 2 if scaled else sample)
        return E(full, _type_of(v) or dt, approx=kind(dt) == "f" or approx)

    # -- helpers ---------------------------------------------------------

    def helper_call(self, sc: Scope, k: str, depth: int) -> Optional[E]:
        if self.nhelper >= 3 or depth < 1:
            return None
        r = self.r
        nargs = r.randrange(1, 4)
        args = [self.expr(sc, r.choice("iif"), depth - 1) for _ in range(nargs)]
        name = f"h{self.nhelper}"
        self.nhelper += 1
        params = [f"p{j}" for j in range(nargs)]
        hs = Scope(-1, [], {p: E(p, a.t, approx=a.approx, rng=a.rng, leaf=a.leaf)
                            for p, a in zip(params, args)}, 0, True, None)
        saved, saved_in = self.arrays, self.in_helper
        self.arrays = []  # helpers see only their parameters
        self.in_helper = True
        try:
            body = []
            if r.random() < 0.4:
                t = self.fresh("t")
                v = self.expr(hs, r.choice("if"), 2)
                body.append(f"    {t} = {v.text}")
                hs.vars[t] = E(t, v.t, approx=v.approx, rng=v.rng)
            ret = self.expr(hs, k, 2)
            if ret.t not in WEAK and r.random() < 0.4:
                c = self.cond(hs)
                other = self.expr(hs, k, 1)
                if other.approx and kind(ret.t) != "f":
                    other = ret
                body.append(f"    if {c}:")
                body.append(f"        return parpy.builtin.convert({other.text}, "
                            f"parpy.types.{_short(ret.t)})")
            body.append(f"    return {ret.text}")
        finally:
            self.arrays = saved
            self.in_helper = saved_in
        texts = [a.text for a in args]
        defs = list(params)
        call = list(texts)
        if self.on("keywords", 0.3):
            if re.fullmatch(r"\d+(\.\d+)?", texts[-1]) and r.random() < 0.6:
                # a literal argument becomes the default the call leaves out
                defs[-1] = f"{params[-1]}={texts[-1]}"
                call = texts[:-1]
            else:
                # the first k by position, the rest by name in any order
                defs[-1] = f"{params[-1]}=None"
                k = r.randrange(len(texts))
                named = [f"{p}={t}" for p, t in zip(params[k:], texts[k:])]
                r.shuffle(named)
                call = texts[:k] + named
        self.helpers.append("@parpy.jit\n" + f"def {name}({', '.join(defs)}):\n"
                            + "\n".join(body) + "\n")
        return E(f"{name}({', '.join(call)})", ret.t, approx=ret.approx, rng=None)

    # -- statements ------------------------------------------------------

    def emit(self, ind: int, s: str) -> None:
        self.lines.append("    " * ind + s)

    def store_value(self, sc: Scope, a: Arr, aug: bool = False) -> Optional[str]:
        """The right-hand side of a store into an element of `a`."""
        k = kind(a.dtype)
        want = "i" if k == "u" else k
        return self.cast_to(self.expr(sc, want, self.r.choice([1, 2, 3])), a)

    def cast_to(self, e: E, a: Arr) -> Optional[str]:
        """`e` as a value to store into an element of `a` (converted where
        the store would not be implicit), or None."""
        k = kind(a.dtype)
        if e.t == a.dtype:
            return e.text
        if e.t in WEAK:
            if (k in "iu" and e.t == "wi" and self.fits(e, a.dtype)) or \
                    (k == "f" and e.t in ("wi", "wf")) or (k == "b" and e.t == "wb"):
                return e.text
        if e.approx and k in "iub":
            return None
        if kind(e.t) == "f" and k in "iub" and not e.leaf:
            return None
        if kind(e.t) == "f" and k == "u":
            return f"parpy.builtin.convert(abs({e.text}), parpy.types.{_short(a.dtype)})"
        if e.t not in WEAK and k != "b" and np.can_cast(e.t, a.dtype, "safe"):
            return e.text
        return f"parpy.builtin.convert({e.text}, parpy.types.{_short(a.dtype)})"

    def owned_array(self, sc: Scope, free: int = 0, dtypes: Sequence[str] = ()) -> Arr:
        """An output array this statement may write (own slab), maybe new;
        with `free`, one with at least that many dimensions after the
        slab's prefix; with `dtypes`, of one of those types."""
        mine = [a for a in self.arrays if a.role == "out" and a.unit == sc.unit
                and (sc.nest is None or a.depth == sc.depth)
                and len(a.shape) - (a.depth if sc.nest is not None else 0) >= free
                and (not dtypes or a.dtype in dtypes)]
        if mine and self.r.random() < 0.6:
            return self.r.choice(mine)
        prefix = [n for _, n in sc.par] if sc.nest is not None else []
        extra = [self.r.choice(self.sizes)
                 for _ in range(max(free, self.r.choice([0, 1, 1, 2])))]
        if not prefix and not extra:
            extra = [self.r.choice(self.sizes)]
        a = self.new_array(self.r.choice(dtypes) if dtypes else None, prefix + extra, "out")
        a.unit, a.depth = sc.unit, (sc.depth if sc.nest is not None else 0)
        return a

    def target(self, sc: Scope, a: Arr, slice_len: Optional[int] = None) -> Optional[str]:
        idx = []
        nfixed = a.depth if sc.nest is not None else 0
        for d, n in enumerate(a.shape):
            if d < nfixed:
                idx.append(sc.par[d][0])
            elif slice_len is not None and d == len(a.shape) - 1:
                if n < slice_len:
                    return None
                idx.append(self.slice_text(n, slice_len))
            else:
                idx.append(self.index_any(sc, n).text)
        return f"{a.name}[{', '.join(idx)}]"

    def stmt_store(self, sc: Scope, ind: int) -> None:
        a = self.owned_array(sc)
        tgt = self.target(sc, a)
        v = self.store_value(sc, a)
        if tgt is None or v is None:
            return
        if self.r.random() < 0.15 and kind(a.dtype) in "iu":
            e = self.expr(sc, "i", 1)
            t = result_type("+", a.dtype, e.t)
            if t == a.dtype and self.fits(e, a.dtype):
                self.emit(ind, f"{tgt} {self.r.choice(['+=', '-=', '*=', '^=', '|='])} {e.text}")
                return
        self.emit(ind, f"{tgt} = {v}")

    def stmt_atomic(self, sc: Scope, ind: int) -> None:
        """`parpy.atomic.op(o, index, v)` on an array that only atomic
        updates touch (a data-dependent index: iterations share elements).
        Types every backend takes; float adds are left out (their order
        changes the rounding)."""
        r = self.r
        if sc.nest is None or not self.on("atomics", 1.0):
            return
        dt = r.choice([d for d in ("int32", "uint32", "float32") if d in self.dtypes] or ["int32"])
        mine = [a for a in self.arrays if a.role == "atomic" and a.unit == sc.unit
                and a.dtype == dt]
        if mine and r.random() < 0.5:
            a = r.choice(mine)
        else:
            a = self.new_array(dt, [r.choice(self.sizes) for _ in range(r.choice([1, 1, 2]))],
                               "atomic")
            a.unit = sc.unit
        v = self.store_value(sc, a)
        if v is None:
            return
        idx = [self.index_any(sc, n).text for n in a.shape]
        index = idx[0] if len(idx) == 1 else f"({', '.join(idx)})"
        op = r.choice(["max", "min"] if kind(dt) == "f" else ["add", "add", "max", "min"])
        self.emit(ind, f"parpy.atomic.{op}({a.name}, {index}, {v})")

    def stmt_local(self, sc: Scope, ind: int) -> None:
        k = self.r.choice("iifb")
        e = self.expr(sc, k, 2, exact=k != "f" and self.r.random() < 0.5)
        name = self.fresh("t")
        self.emit(ind, f"{name} = {e.text}")
        sc.vars[name] = E(name, e.t, approx=e.approx, rng=e.rng, leaf=e.leaf)
        sc.own[name] = sc.level

    def slice_target(self, sc: Scope) -> Optional[Tuple[Arr, int, str, str]]:
        """An array this scope writes, a length, a slice of it of that
        length along its last dimension (`o[prefix, lo:hi]`) and the kind
        of values it takes ("i" or "f"), or None."""
        a = self.owned_array(sc)
        if a.dtype == "bool" or len(a.shape) <= (a.depth if sc.nest is not None else 0):
            return None
        n = self.r.randrange(1, a.shape[-1] + 1)
        tgt = self.target(sc, a, slice_len=n)
        return None if tgt is None else (a, n, tgt, "i" if kind(a.dtype) in "iu" else "f")

    def stmt_slice(self, sc: Scope, ind: int) -> None:
        """`o[prefix, lo:hi] = expr of slices` (labelled: parallel)."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, n, tgt, k = st
        s1 = self.slice_of(sc, k, n)
        view = s1 is not None
        if self.on("axis_reduce", 0.5):
            reduced = self.axis_reduce_of(sc, k, n)
            view = view and reduced is None
            s1 = reduced or s1
        if s1 is None:
            return
        text, t, _ = s1
        if a.name + "[" in text and text.split("[")[0] == a.name:
            if not self.on("slice_overlap", 0.5):
                return
        if view:
            text = self.view_of(text, 1, False)
        e = E(text, t)
        if r.random() < 0.6:
            other = self.leaf(sc, k, True) if r.random() < 0.5 else None
            s2 = self.slice_of(sc, k, n) if other is None else None
            if s2 and s2[0].startswith(a.name + "[") and not self.on("slice_overlap", 0.5):
                s2 = None
            b = other or (E(s2[0], s2[1]) if s2 else None)
            if b is not None:
                op = r.choice(["+", "-", "*"])
                e2 = self.combine(op, e, b)
                if e2 is not None:
                    e = e2
        if e.t != a.dtype and not (e.t not in WEAK and np.can_cast(e.t, a.dtype, "safe")):
            return
        # NumPy copies a 1-D view into an overlapping one of the same
        # direction forward, without a temporary, even when their steps
        # differ (`a[9:30:2] = a[14:25]` reads elements it has written
        # already); parpy evaluates the right side first, as NumPy's rule
        # says. Such a program has no reliable reference: not generated.
        reads_own = re.search(rf"\b{a.name}\[", e.text) is not None
        if reads_own and ("::" in tgt + e.text or re.search(r":-?\d*:", tgt + e.text)):
            return
        value = e.text
        read = set(re.findall(r"\b([A-Za-z_]\w*)\[", e.text))
        names = {x.name: x for x in self.arrays}
        if e.text != text and read \
                and all(names.get(n) is not None and names[n].role == "in" for n in read) \
                and self.on("array_locals", 0.7):
            # a local holding the array expression (its arrays are inputs,
            # which nothing writes; a bare slice is a NumPy view, refused)
            value = self.fresh("e")
            self.emit(ind, f"{value} = {e.text}")
        if sc.nest is not None and r.random() < 0.6:
            self.emit(ind, f"parpy.label('{self.label(sc.nest, sc.depth)}')")
        self.emit(ind, f"{tgt} = {value}")

    def stmt_slice2(self, sc: Scope, ind: int) -> None:
        """`o[prefix, a:b, c:d] = expr` of 2-D slices of inputs (or of
        rows of them, broadcast over the rows), with zero, one or two
        labels in a nest: two labels take the two sliced dimensions (the
        last one the innermost), one label the innermost alone."""
        r = self.r
        # the target holds what the inputs hold (one of their types)
        k = r.choice("if")
        inputs = sorted({x.dtype for x in self.arrays if x.role == "in"
                         and (kind(x.dtype) == k or (k == "i" and kind(x.dtype) == "u"))})
        if not inputs:
            return
        a = self.owned_array(sc, free=2, dtypes=inputs)
        nfixed = a.depth if sc.nest is not None else 0
        n1, n2 = r.randrange(1, a.shape[-2] + 1), r.randrange(1, a.shape[-1] + 1)
        idx = [sc.par[d][0] if d < nfixed else self.index_any(sc, n).text
               for d, n in enumerate(a.shape[:-2])]
        idx += [self.slice_text(a.shape[-2], n1), self.slice_text(a.shape[-1], n2)]
        tgt = f"{a.name}[{', '.join(idx)}]"

        def source() -> Optional[E]:
            fits = [x for x in self.arrays if x.role == "in"
                    and (kind(x.dtype) == k or (k == "i" and kind(x.dtype) == "u"))]
            full = [x for x in fits if len(x.shape) >= 2
                    and x.shape[-2] >= n1 and x.shape[-1] >= n2]
            rows = [x for x in fits if x.shape[-1] >= n2]
            if rows and (not full or r.random() < 0.25):
                x = r.choice(rows)  # one row, broadcast over the n1 rows
                sub = [self.index_any(sc, n).text for n in x.shape[:-1]]
            elif full:
                x = r.choice(full)
                sub = [self.index_any(sc, n).text for n in x.shape[:-2]]
                sub.append(self.slice_text(x.shape[-2], n1, spelled=True))
            else:
                return None
            sub.append(self.slice_text(x.shape[-1], n2, spelled=True))
            return E(f"{x.name}[{', '.join(sub)}]", x.dtype)

        e = source()
        if e is None:
            return
        for _ in range(r.randrange(0, 3)):
            b = source() if r.random() < 0.6 else self.leaf(sc, k, True)
            e2 = None if b is None else self.combine(r.choice(["+", "-", "*"]), e, b)
            if e2 is not None:
                e = e2
        if e.t != a.dtype and not (e.t not in WEAK and np.can_cast(e.t, a.dtype, "safe")):
            return
        if sc.nest is not None:
            # nests of at most three levels, as `par_loop` makes them, and
            # of at most 2^20 threads (a label past that is left out): the
            # emulator runs a fiber per thread
            count = min(r.choice([0, 1, 2, 2]), 3 - sc.depth)
            for d in range(count):
                lab = self.label(sc.nest, sc.depth + d)
                if int(np.prod(sc.nest.threads[:sc.depth + d + 1])) > 1 << 20:
                    del self.spec[lab]
                    break
                self.emit(ind, f"parpy.label('{lab}')")
        self.emit(ind, f"{tgt} = {e.text}")

    def stmt_scan(self, sc: Scope, ind: int) -> None:
        """`o[prefix, lo:hi] = np.cumsum(slice)` (or `cumprod`, or the
        methods): a running sum in order, without a label."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, n, tgt, k = st
        op = r.choice(["cumsum", "cumprod"] if n <= 8 else ["cumsum"])
        ufunc = self.on("ufunc_methods", 0.3)
        if ufunc and r.random() < 0.5:
            op = r.choice(["maximum", "minimum"])
        for _ in range(6):  # a source of another array, of a type the target holds
            s1 = self.slice_of(sc, k, n)
            if s1 is None or re.search(rf"\b{a.name}\[", s1[0]):
                continue  # (scans in place: tests/test_cumulative.py)
            text, t, _ = s1
            with np.errstate(all="ignore"):
                st = t if op in ("maximum", "minimum") else \
                    _type_of(getattr(np, op)(np.ones(2, dtype=np.dtype(t)))[0]) or t
            if st == a.dtype or np.can_cast(st, a.dtype, "safe"):
                if ufunc:
                    scan = f"np.{UFUNC_OF_REDUCTION.get(op, op)}.accumulate({text})"
                else:
                    scan = f"np.{op}({text})" if r.random() < 0.6 else f"{text}.{op}()"
                self.emit(ind, f"{tgt} = {scan}")
                return

    def stmt_window(self, sc: Scope, ind: int) -> None:
        """`for j in range(n): w = s[j:j + L]` then `o[prefix, lo:hi][j] =`
        an element, a difference or the largest element of `w`: a window
        named in a sequential loop, of a slice `L - 1` longer than the
        target, which must compose into one subscript of the array."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, n, tgt, k = st
        width = r.randrange(1, 5)
        s1 = self.slice_of(sc, k, n + width - 1)
        if s1 is None or re.search(rf"\b{a.name}\[", s1[0]):
            return  # (a window of the array written: not here)
        text, t, approx = s1
        if not (t == a.dtype or (t not in WEAK and np.can_cast(t, a.dtype, "safe"))):
            return
        if re.search(r":-\d+\]", text):
            return  # (a window of a slice walked backwards: refused)
        j, w = self.fresh("j"), self.fresh("w")
        c, d = r.randrange(-width, width), r.randrange(width)
        value = r.choice([f"{w}[{c}]", f"np.max({w})", f"{w}.min()"]
                         + ([f"{w}[{c}] - {w}[{d}]"] if t != "bool" else []))
        self.emit(ind, f"for {j} in range({n}):")
        self.emit(ind + 1, f"{w} = {text}[{j}:{j} + {width}]")
        self.emit(ind + 1, f"{tgt}[{j}] = {value}")

    def stmt_local_array(self, sc: Scope, ind: int) -> None:
        """A local array of an iteration of the parallel loops around it:
        made, updated element by element in a sequential loop, stored into
        `o[prefix, lo:hi]`."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, n, tgt, k = st
        dt = a.dtype
        x = r.random()
        make = f"np.zeros({n}, dtype=np.{dt})"
        if x < 0.2:
            make = f"np.ones(({n},), np.{dt})"
        elif x < 0.4:
            make = f"np.full({n}, 2, dtype=np.{dt})"
        elif x < 0.6:
            s1 = self.slice_of(sc, k, n)
            if s1 is not None and s1[1] == dt:
                make = f"np.zeros_like({s1[0]})"
        name, j = self.fresh("la"), self.fresh("j")
        e = self.leaf(sc, k, True)
        value = e.text if e.t == dt or (e.t not in WEAK and np.can_cast(e.t, dt, "safe")) else "1"
        self.emit(ind, f"{name} = {make}")
        self.emit(ind, f"for {j} in range({n}):")
        self.emit(ind + 1, f"{name}[{j}] = {name}[{j}] + {value}")
        self.emit(ind, f"{tgt} = {name}")

    def stmt_local_copy(self, sc: Scope, ind: int) -> None:
        """A copy of a slice in a local array of its name (`local_copies`):
        written, re-bound and updated in place, then stored into
        `o[prefix, lo:hi]`."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, n, tgt, k = st
        dt = a.dtype
        s1 = self.slice_of(sc, k, n)
        if s1 is None or s1[1] != dt:
            return
        name = self.fresh("lc")
        make = r.choice([f"{s1[0]}.copy()", f"np.copy({s1[0]})", f"{s1[0]} * 1"])
        self.emit(ind, f"{name} = {make}")
        e = self.leaf(sc, k, True)
        value = e.text if e.t == dt or (e.t not in WEAK and np.can_cast(e.t, dt, "safe")) else "1"
        for _ in range(r.randrange(1, 4)):
            x = r.random()
            if x < 0.3:
                self.emit(ind, f"{name}[{r.randrange(n)}] = {value}")
            elif x < 0.55:
                self.emit(ind, f"{name} = {name}[::-1] + {name}")
            elif x < 0.75:
                self.emit(ind, f"{name} += {name}[{r.randrange(n)}]")
            else:
                self.emit(ind, f"{name}[{name} > {name}[{r.randrange(n)}]] = {value}")
        self.emit(ind, f"{tgt} = {name}")

    def stmt_masked(self, sc: Scope, ind: int) -> None:
        """`o[prefix, lo:hi] = np.op(s1[s2 > c])` (`masked_reads`): a
        reduction of the elements a mask selects, maybe of an expression
        of reads through the mask, or how many there are."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, _, tgt, k = st
        m = r.randrange(1, 12)
        s1, s2 = self.slice_of(sc, k, m), self.slice_of(sc, r.choice("if"), m)
        if s1 is None or s2 is None:
            return
        mask = f"{s2[0]} > {r.choice(['0', '1', '0.5'])}"
        ops = ["sum", "mean", "prod", "any", "count_nonzero", "len", "var", "std"]
        op = r.choice(ops if k == "f" else ["sum", "prod", "any", "count_nonzero", "len", "var"])
        read = f"{s1[0]}[{mask}]"
        if op in ("sum", "mean", "var") and r.random() < 0.4:
            read = f"{read} * {s1[0]}[{mask}]"
        ddof = f", ddof={r.choice('01')}" if op in ("var", "std") and r.random() < 0.4 else ""
        if op == "len":
            value, t = f"len({read})", "int64"
        else:
            value = f"np.{op}({read}{ddof})" if r.random() < 0.7 or op == "count_nonzero" \
                else f"({read}).{op}({ddof[2:]})"
            with np.errstate(all="ignore"):
                t = _type_of(getattr(np, op)(np.ones(2, dtype=np.dtype(s1[1])))) or s1[1]
        if t == a.dtype or np.can_cast(t, a.dtype, "safe"):
            self.emit(ind, f"{tgt} = {value}")

    def stmt_hoisted(self, sc: Scope, ind: int) -> None:
        """`o[prefix, lo:hi] =` a slice of a sorted, scanned or computed
        array, or a concatenation (`hoisted`): arrays a statement of their
        own makes first."""
        r = self.r
        st = self.slice_target(sc)
        if st is None:
            return
        a, n, tgt, k = st
        x = r.random()
        if x < 0.4 and self.on("joined", 0.8):
            # a slice of a tiled, repeated, stacked or diagonal array
            m = (n + 1) // 2 + r.randrange(0, 3)
            s1 = self.slice_of(sc, k, m)
            s2 = self.slice_of(sc, k, n)
            if s1 is None or s2 is None or re.search(rf"\b{a.name}\[", s1[0] + s2[0]):
                return
            lo = r.randrange(0, 2 * m - n + 1)
            y = r.random()
            if y < 0.3:
                value, t = f"np.tile({s1[0]}, 2)[{lo}:{lo + n}]", s1[1]
            elif y < 0.6:
                value, t = f"np.repeat({s1[0]}, 2)[{lo}:{lo + n}]", s1[1]
            elif y < 0.8:
                j = r.randrange(2)
                stack = r.choice(["np.stack", "np.vstack"])
                value = f"{stack}(({s2[0]}, {s2[0]} * 2))[{j}, :]"
                d = np.ones(2, dtype=np.dtype(s2[1]))
                t = str(np.stack((d, d * 2)).dtype)
            else:
                j = r.randrange(n)
                f = r.choice(["np.eye", "np.tri"])
                value = f"{s2[0]} * {f}({n}, k={r.randrange(-1, 2)})[{j}, :]"
                t = str(np.result_type(np.dtype(s2[1]), np.float64))
        elif x < 0.5:
            m = n + r.randrange(0, 4)
            s1 = self.slice_of(sc, k, m)
            if s1 is None or re.search(rf"\b{a.name}\[", s1[0]):
                return
            lo = r.randrange(0, m - n + 1)
            if x < 0.2:
                value, t = f"np.sort({s1[0]})[{lo}:{lo + n}]", s1[1]
            elif x < 0.35:
                value, t = f"({s1[0]} * 2)[{lo}:{lo + n}]", s1[1]
            else:
                with np.errstate(all="ignore"):
                    t = _type_of(np.cumsum(np.ones(2, dtype=np.dtype(s1[1])))[0]) or s1[1]
                value = f"np.cumsum({s1[0]})[{lo}:{lo + n}]"
        else:
            p = r.randrange(0, n)  # (the last part has at least one element)
            s1, s2 = self.slice_of(sc, k, p) if p else None, self.slice_of(sc, k, n - p)
            if s2 is None or (p and s1 is None):
                return
            parts = [s2] if not p else [s1, s2]
            t = str(np.result_type(*[np.dtype(q[1]) for q in parts]))
            value = f"np.concatenate(({', '.join(q[0] for q in parts)},))"
        if t == a.dtype or np.can_cast(t, a.dtype, "safe"):
            self.emit(ind, f"{tgt} = {value}")

    def stmt_list(self, sc: Scope, ind: int) -> None:
        """`o[prefix, lo:hi] = [e1, ..., en]` of items of the target's type
        (`lists`), maybe read in a loop first."""
        r = self.r
        st = self.slice_target(sc)
        if st is None or st[1] > 6:
            return
        a, n, tgt, k = st
        items = []
        for _ in range(n):
            e = self.leaf(sc, k, True)
            items.append(e.text if e.t == a.dtype else f"np.{a.dtype}(1)")
        self.emit(ind, f"{tgt} = [{', '.join(items)}]")

    # -- the features of stop 57 (each drawn from a stream of its own) ----

    def store_of(self, sc: Scope, ind: int, e: E) -> None:
        """`o[..] = e` into an array this scope writes (converted as needed)."""
        a = self.owned_array(sc)
        tgt, v = self.target(sc, a), self.cast_to(e, a)
        if tgt is not None and v is not None:
            self.emit(ind, f"{tgt} = {v}")

    def strong(self, k: str) -> str:
        """A NumPy type of kind k ("i" any integer, "f" a float)."""
        return self.r.choice(INTS if k == "i" else [d for d in FLOATS if d in self.dtypes])

    def stmt_data_while(self, sc: Scope, ind: int) -> None:
        """A `while` loop whose trip count the elements of an input row
        decide (`data_while`): `k = lo; while k < n and x[.., k] > v: k +=
        1`, counting down to -1, or `while True:` left by a `break`; maybe
        summing what it passes; then `k` (and the sum) stored and kept."""
        r = self.r
        if r.random() < 0.25:
            # halvings of a number's magnitude down to a bound (exact steps)
            f = self.leaf(sc, "f", True)
            v, c = self.fresh("v"), self.fresh("c")
            self.emit(ind, f"{v} = abs({f.text})")
            self.emit(ind, f"{c} = 0")
            self.emit(ind, f"while {v} {r.choice(['>', '>='])} {r.choice(['1.0', '0.75', '2.0'])}"
                      f" and {c} < 64:")
            self.emit(ind + 1, r.choice([f"{v} = {v} / 2", f"{v} *= 0.5"]))
            self.emit(ind + 1, f"{c} += 1")
            for name, e in ((c, E(c, "wi", rng=(0, 64))), (v, E(v, f.t, leaf=True))):
                sc.vars[name] = e
                sc.own[name] = sc.level
                self.store_of(sc, ind, e)
            return
        ins = [a for a in self.arrays if a.role == "in"]
        if not ins:
            return
        a = r.choice(ins)
        n, ak = a.shape[-1], kind(a.dtype)
        k = self.fresh("k")
        el = f"{a.name}[{', '.join([self.index_any(sc, m).text for m in a.shape[:-1]] + [k])}]"
        if ak == "b":
            test = r.choice([el, f"not {el}"])
        else:
            v = self.expr(sc, "f" if ak == "f" else "i", 1, exact=True)
            op = r.choice(["<", "<=", ">", ">=", "!="])
            if result_type(op, a.dtype, v.t) is None or not self.fits(v, a.dtype) or \
                    (ak == "u" and v.t == "wi" and (v.rng is None or v.rng[0] < 0)):
                v = E("1", "wi", rng=(1, 1))
                op = ">"
            test = f"{el} {op} {v.text}"
        down = r.random() < 0.3
        start = r.randrange(n)
        acc = None
        if ak in "iuf" and r.random() < 0.4:
            acc = self.fresh("acc")
            self.emit(ind, f"{acc} = np.{a.dtype}(0)")
        if down:
            bound, step, rng = f"{k} >= 0", f"{k} -= 1", (-1, start)
        else:
            row = el[:el.rindex(",") + 1] + " :]" if len(a.shape) > 1 else a.name
            lim = r.choice([str(n), f"{a.name}.shape[{len(a.shape) - 1}]", f"len({row})"])
            bound, step, rng = f"{k} < {lim}", f"{k} += 1", (start, n)
        self.emit(ind, f"{k} = {start}")
        if r.random() < 0.3:
            self.emit(ind, "while True:")
            self.emit(ind + 1, f"if not ({bound} and {test}):")
            self.emit(ind + 2, "break")
        else:
            self.emit(ind, f"while {bound} and {test}:")
        if acc is not None:
            self.emit(ind + 1, f"{acc} += {el}")
        self.emit(ind + 1, step)
        sc.vars[k] = E(k, "wi", rng=rng)
        sc.own[k] = sc.level
        self.store_of(sc, ind, sc.vars[k])
        if acc is not None:
            e = E(acc, a.dtype, approx=ak == "f")
            sc.vars[acc] = e
            sc.own[acc] = sc.level
            self.store_of(sc, ind, e)

    def stmt_helper_tuple(self, sc: Scope, ind: int) -> None:
        """`q, r = h(a, b)` (or `h(a, b)[j]`) of a helper with a loop that
        may `return` a pair early (`helper_tuples`)."""
        r = self.r
        if self.nhelper >= 6:
            return
        k = r.choice("iif")
        t = self.strong(k)
        a = self.expr(sc, k, 1, exact=k == "i")
        b = self.expr(sc, "i", 1, exact=True)
        name = f"h{self.nhelper}"
        self.nhelper += 1
        trips = r.randrange(1, 5)
        acc = E("acc", t, approx=k == "f")
        hs = Scope(-1, [], {"p1": E("p1", b.t, rng=b.rng), "j": E("j", "wi", rng=(0, trips - 1)),
                            "acc": acc}, 0, True, None)
        saved, saved_in = self.arrays, self.in_helper
        self.arrays, self.in_helper = [], True
        try:
            cond = self.cond(hs)
            upd = None
            for _ in range(6):
                op = r.choice(["+", "-", "*", "&", "|", "^"] if k == "i" else ["+", "-", "*"])
                e = self.expr(hs, r.choice("ii" if k == "i" else "fi"), 1, exact=k == "i")
                if result_type(op, t, e.t) == t and self.fits(e, t):
                    upd = f"acc {op} {e.text}"
                    break
            if upd is None:
                upd = "acc + acc"
        finally:
            self.arrays, self.in_helper = saved, saved_in
        body = [f"    acc = parpy.builtin.convert(p0, parpy.types.{_short(t)})",
                f"    for j in range({trips}):",
                f"        if {cond}:",
                "            return acc, j",
                f"        acc = {upd}",
                f"    return acc, {trips}"]
        self.helpers.append("@parpy.jit\n" + f"def {name}(p0, p1):\n" + "\n".join(body) + "\n")
        call = f"{name}({a.text}, {b.text})"
        q, c = self.fresh("q"), self.fresh("c")
        if r.random() < 0.3:
            j = r.randrange(2)
            self.emit(ind, f"{[q, c][j]} = {call}[{j}]")
            names = [[q, c][j]]
        else:
            self.emit(ind, f"{q}, {c} = {call}")
            names = [q, c]
        for nm in names:
            e = E(q, t, approx=k == "f") if nm == q else E(c, "wi", rng=(0, trips))
            sc.vars[nm] = e
            sc.own[nm] = sc.level
            self.store_of(sc, ind, e)

    def stmt_scalar_updates(self, sc: Scope, ind: int) -> None:
        """Scalar locals swapped and updated as tuples, chained
        assignments, divmod pairs and augmented assignments that keep the
        local's type, or an augmented store into an array element
        (`scalar_updates`)."""
        r = self.r
        x = r.random()
        if x < 0.3:
            # an element updated by any operator, its array's type kept
            a = self.owned_array(sc)
            tgt = self.target(sc, a)
            if tgt is None or a.dtype == "bool":
                return
            ak = kind(a.dtype)
            for _ in range(6):
                op, e = self.aug_choice(ak != "f")
                if e is not None:
                    pass
                elif op in ("//", "%"):
                    e = self.safe_divisor(sc, 2)
                elif op == "/":
                    d = self.expr(sc, "f", 1)
                    e = E(f"(abs({d.text}) + 1.0)", result_type("+", d.t, "wf") or "wf",
                          approx=d.approx)
                else:
                    e = self.expr(sc, "f" if ak == "f" and r.random() < 0.5 else "i", 1)
                rt = result_type(op, a.dtype, e.t)
                if rt is not None and rt not in WEAK and self.fits(e, a.dtype) and \
                        np.can_cast(rt, a.dtype, "safe") and kind(rt) == ak and \
                        not (e.approx and ak != "f"):
                    self.emit(ind, f"{tgt} {op}= {e.text}")
                    return
            return
        if x < 0.45:
            self.array_updates(sc, ind)
            return
        k = r.choice("iif")
        weak = k == "i" and r.random() < 0.25
        t = "wi" if weak else self.strong(k)
        u, w = self.fresh("u"), self.fresh("u")
        if weak:
            self.emit(ind, f"{u}, {w} = {r.randrange(-3, 4)}, {r.randrange(0, 4)}")
        else:
            e1 = self.expr(sc, k, 1, exact=k == "i")
            e2 = self.expr(sc, k, 1, exact=k == "i")
            self.emit(ind, f"{u} = parpy.builtin.convert({e1.text}, parpy.types.{_short(t)})")
            if r.random() < 0.5:
                self.emit(ind, f"{w} = {u}")
            else:
                self.emit(ind, f"{w} = parpy.builtin.convert({e2.text}, "
                          f"parpy.types.{_short(t)})")
        ops = ["+", "-"] if weak else (["+", "-", "*", "&", "|", "^"] if k == "i"
                                       else ["+", "-", "*"])
        y = r.random()
        if y < 0.4:
            op = r.choice(ops)
            step = f"{u}, {w} = {w}, {u} {op} {w}" if r.random() < 0.7 else f"{u}, {w} = {w}, {u}"
            if r.random() < 0.5:
                m = self.fresh("m")
                self.emit(ind, f"for {m} in range({r.randrange(1, 5)}):")
                self.emit(ind + 1, step)
            else:
                self.emit(ind, step)
        elif y < 0.6 and k == "i":
            d = self.fresh("u")
            div = E(f"(({w} & 7) + 1)", t)
            self.emit(ind, f"{u}, {d} = divmod({u}, {div.text})")
            self.emit(ind, f"{w} = {w} - {d}" if not weak else f"{w} -= {d}")
        elif y < 0.75:
            e = self.expr(sc, k, 1, exact=k == "i")
            c = self.fresh("u")
            if weak and e.t != "wi":
                e = E(str(r.randrange(-3, 4)), "wi")
            if e.t == t:
                self.emit(ind, f"{c} = {u} = {e.text}")
            else:
                self.emit(ind, f"{c} = {u} = parpy.builtin.convert({e.text}, "
                          f"parpy.types.{_short(t)})")
            self.emit(ind, f"{w} = {w} {r.choice(ops)} {c}")
        for _ in range(r.randrange(1, 4)):
            op, e = self.aug_choice(k == "i")
            if e is not None:
                pass
            elif op in ("//", "%"):
                e = E(f"(({w} & 7) + 1)", t)
            elif op == "/":
                e = E(f"(abs({w}) + 1.0)", t)
            else:
                e = self.expr(sc, "i" if k == "i" else r.choice("if"), 1, exact=k == "i")
                if weak and e.t != "wi":
                    continue
            if weak and op in ("*", "**", "<<", "/"):
                continue  # (a Python int grows without bound; `/` makes a float)
            if result_type(op, t, e.t) == t and self.fits(e, t):
                self.emit(ind, f"{u} {op}= {e.text}")
        for nm in (u, w):
            v = E(nm, t, approx=k == "f", rng=None)
            sc.vars[nm] = v
            sc.own[nm] = sc.level
        self.store_of(sc, ind, sc.vars[u])
        self.store_of(sc, ind, sc.vars[w])

    def aug_choice(self, integer: bool) -> Tuple[str, Optional[E]]:
        """The operator of an augmented assignment (no `//` or `%` of
        floats: a rounded value may cross a step), with its operand where
        that is a small count (`**`, the shifts)."""
        r = self.r
        op = r.choice(["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"]
                      if integer else ["+", "-", "*", "/", "**"])
        if op == "**":
            return op, E(str(r.randrange(0, 3)), "wi", rng=(0, 2))
        if op in ("<<", ">>"):
            c = r.randrange(0, 4)
            return op, E(str(c), "wi", rng=(c, c))
        return op, None

    def array_updates(self, sc: Scope, ind: int) -> None:
        """Two elements of an array this scope writes swapped or updated as a
        tuple (`o[.., a], o[.., b] = o[.., b], o[.., a] + v`: the right side
        read first), a chained assignment with element targets, or a slice
        updated in place by an augmented assignment, maybe from an
        overlapping slice of itself (NumPy reads a copy)."""
        r = self.r
        a = self.owned_array(sc)
        if a.dtype == "bool":
            return
        ak = kind(a.dtype)
        y = r.random()
        if y < 0.35:
            t1, t2 = self.target(sc, a), self.target(sc, a)
            if t1 is None or t2 is None:
                return
            v = self.cast_to(E(f"{t1} + 1" if ak != "f" else f"{t1} * 0.5", a.dtype), a) \
                if r.random() < 0.6 else t1
            if v is None:
                return
            self.emit(ind, f"{t1}, {t2} = {t2}, {v}")
        elif y < 0.65:
            t1, t2 = self.target(sc, a), self.target(sc, a)
            v = self.store_value(sc, a)
            if t1 is None or t2 is None or v is None:
                return
            if r.random() < 0.5:
                self.emit(ind, f"{t1} = {t2} = {v}")
            else:
                u = self.fresh("u")
                self.emit(ind, f"{u} = {t1} = {v}")
                e = E(u, a.dtype, approx=ak == "f")
                sc.vars[u] = e
                sc.own[u] = sc.level
        else:
            if len(a.shape) <= (a.depth if sc.nest is not None else 0):
                return
            n = r.randrange(1, a.shape[-1] + 1)
            tgt = self.target(sc, a, slice_len=n)
            if tgt is None or "::" in tgt or re.search(r":-?\d*:", tgt):
                return
            own = r.random() < 0.4 and a.shape[-1] > n
            if own:
                lo = r.randrange(0, a.shape[-1] - n + 1)
                src = (tgt[:tgt.rindex("[") + 1] + ", ".join(
                    tgt[tgt.rindex("[") + 1:-1].split(", ")[:-1] + [f"{lo}:{lo + n}"]) + "]")
                s1 = (src, a.dtype)
            else:
                s1 = self.slice_of(sc, "f" if ak == "f" else "i", n)
            if s1 is None or "::" in s1[0] or re.search(r":-?\d*:", s1[0]):
                return
            ops = ["+", "-", "*"] + (["&", "|", "^"] if ak != "f" else [])
            op = r.choice(ops)
            rt = result_type(op, a.dtype, s1[1])
            if rt is None or rt in WEAK or not np.can_cast(rt, a.dtype, "safe"):
                return
            if sc.nest is not None and r.random() < 0.5:
                self.emit(ind, f"parpy.label('{self.label(sc.nest, sc.depth)}')")
            self.emit(ind, f"{tgt} {op}= {s1[0]}")

    def stmt_dtype_if(self, sc: Scope, ind: int, budget: int) -> None:
        """`if x.dtype == np.float32:` (a constant branch, `new_math`)."""
        r = self.r
        a = r.choice(self.arrays)
        other = r.choice(self.dtypes)
        self.emit(ind, f"if {a.name}.dtype {r.choice(['==', '!='])} np.{other}:")
        self.block(sc.child(), ind + 1, budget - 1, allow_par=False)
        if r.random() < 0.5:
            self.emit(ind, "else:")
            self.block(sc.child(), ind + 1, budget - 1, allow_par=False)

    def call_type(self, template: str, types: Sequence[str]) -> Optional[str]:
        """The type of `template` with {0}, {1}, .. samples of `types`."""
        import math
        env = {"np": np, "math": math}
        for j, t in enumerate(types):
            env[f"__S{j}__"] = _sample(t)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = eval(template.format(*[f"__S{j}__" for j in range(len(types))]), env)
        except Exception:
            return None
        if isinstance(v, np.ndarray) and v.ndim == 0:
            return v.dtype.name
        return _type_of(v)

    def new_math_expr(self, sc: Scope, k: str, depth: int) -> Optional[E]:
        """A call of the functions added in stops 50-56 (`new_math`)."""
        r = self.r
        if k == "i":
            x = r.random()
            if x < 0.15:
                a = self.arrays and r.choice(self.arrays)
                if not a:
                    return None
                attr = r.choice(["itemsize", "nbytes"])
                v = np.dtype(a.dtype).itemsize * (int(np.prod(a.shape)) if attr == "nbytes" else 1)
                return E(f"{a.name}.{attr}", "wi", rng=(v, v))
            a = self.expr(sc, "i", depth - 1, exact=True)
            b = self.expr(sc, "i", depth - 1, exact=True)
            if x < 0.35:
                tpl = r.choice(["np.gcd({0}, {1})", "np.lcm(({0} & 15), ({1} & 15))"])
            elif x < 0.45:
                if (a.t == "wi" and a.rng is None) or (b.t == "wi" and b.rng is None):
                    return None
                if "uint64" in (a.t, b.t):
                    # (the Python int of a uint64 past 2**63 - 1 is no
                    # int64: parpy raises OverflowError, as documented)
                    return None
                tpl = "math.gcd({0}, {1})"
            elif x < 0.6:
                c = self.expr(sc, "i", depth - 1, exact=True)
                if any(e.t == "wi" and e.rng is None for e in (a, b, c)):
                    return None
                t = self.call_type("math.prod(({0}, {1}, {2}))", [a.t, b.t, c.t])
                if t is None or (t in WEAK and any(e.t not in WEAK for e in (a, b, c))):
                    return None
                if not (self.fits(a, b.t) and self.fits(b, a.t) and self.fits(c, a.t)
                        and self.fits(a, c.t) and self.fits(b, c.t) and self.fits(c, b.t)):
                    return None
                if a.t == "wi" and b.t == "wi":
                    # (the product folds from the left: `a * b`, a Python
                    # int, meets `c` too; seed 9105078's 32 * 100 an int8)
                    ab = [x1 * y1 for x1 in a.rng for y1 in b.rng]
                    if not self.fits(E("", "wi", rng=(min(ab), max(ab))), c.t):
                        return None
                rng = None
                if t == "wi":
                    vals = [x1 * y1 * z1 for x1 in a.rng for y1 in b.rng for z1 in c.rng]
                    rng = (min(vals), max(vals))
                return E(f"math.prod(({a.text}, {b.text}, {c.text}))", t, rng=rng)
            elif x < 0.75:
                d = self.safe_divisor(sc, depth)
                if not (self.fits(a, d.t) and self.fits(d, a.t)):
                    return None
                t = result_type("//", a.t, d.t)
                if t is None:
                    return None
                return E(f"divmod({a.text}, {d.text})[{r.randrange(2)}]", t)
            elif x < 0.85:
                if a.t in WEAK:
                    return None
                tpl = f"pow({{0}}, {r.randrange(0, 4)})"
                t = self.call_type(tpl, [a.t])
                return None if t is None else E(tpl.format(a.text), t)
            else:
                f = self.leaf(sc, "f", True)
                if not f.leaf:
                    return None
                t = self.call_type("round({0})", [f.t])
                return None if t is None else E(f"round({f.text})", t,
                                                rng=(-10**6, 10**6) if t == "wi" else None)
            if not (self.fits(a, b.t) and self.fits(b, a.t)):
                return None
            t = self.call_type(tpl, [a.t, b.t])
            return None if t is None else E(tpl.format(a.text, b.text), t)
        if k == "b":
            f = self.leaf(sc, "f", True)
            tpl = r.choice(["np.isposinf({0})", "np.isneginf({0})"])
            t = self.call_type(tpl, [f.t])
            return None if t is None else E(tpl.format(f.text), t)
        # floats
        x = r.random()
        a = self.leaf(sc, "f", True)
        if x < 0.12:
            j = r.randrange(-3, 4)
            tpl = f"np.ldexp({{0}}, {j})" if r.random() < 0.7 else f"math.ldexp({{0}}, {j})"
            args = [a]
        elif x < 0.25:
            b = self.leaf(sc, "f", True)
            tpl = r.choice(["np.nextafter({0}, {1})", "math.nextafter({0}, {1})"])
            args = [a, b]
        elif x < 0.35:
            if a.t == "float16":
                return None
            tpl = r.choice(["np.spacing({0})", "math.ulp({0})"])
            args = [a]
        elif x < 0.5:
            b = self.leaf(sc, "f", True)
            tpl = "math.remainder({0}, abs({1}) + 0.5)"
            args = [a, b]
        elif x < 0.6:
            tpl = r.choice(["np.conj({0})", "np.real({0})"])
            args = [a]
        elif x < 0.72:
            a = self.expr(sc, "f", depth - 1)
            f = r.choice(["math.degrees", "math.radians", "np.degrees", "np.radians"])
            t = self.call_type(f + "({0})", [a.t])
            if t is None:
                return None
            self.math_floats.add(t)
            return E(f"{f}({a.text})", t, approx=True)
        elif x < 0.82:
            b = self.expr(sc, "f", depth - 1)
            c = self.expr(sc, r.choice("if"), depth - 1)
            if not (self.fits(b, c.t) and self.fits(c, b.t)):
                return None
            t = self.call_type("math.prod(({0}, {1}, {2}))", [a.t, b.t, c.t])
            if t is None or kind(t) != "f":
                return None
            self.math_floats.add(t)
            return E(f"math.prod(({a.text}, {b.text}, {c.text}))", t, approx=True)
        else:
            # np.where of numbers of two types: NumPy's common type
            c = self.bool_expr(sc, max(depth - 1, 0))
            b = self.expr(sc, r.choice("if"), depth - 1)
            if not (self.fits(a, b.t) and self.fits(b, a.t)):
                return None
            t = self.call_type("np.where(True, {0}, {1})", [a.t, b.t])
            if t is None:
                return None
            return E(f"np.where({c.text}, {a.text}, {b.text})", t, approx=b.approx)
        t = self.call_type(tpl, [e.t for e in args])
        if t is None or (t == "float16" and tpl.startswith(("np.nextafter", "np.spacing"))):
            # (NumPy steps on a half's bits: parpy refuses it, as documented)
            return None
        if kind(t) == "f":
            self.math_floats.add(t)
        return E(tpl.format(*[e.text for e in args]), t)

    def stmt_sort_search(self, sc: Scope, ind: int) -> None:
        """`o[.., lo:hi] = np.sort(s)` / `np.argsort(s, kind='stable')`,
        `o[.., lo:hi].sort()`, or `k = np.searchsorted(s, v, side=..)`
        (`sort_search`)."""
        r = self.r
        x = r.random()
        if x < 0.6:
            arg = x < 0.3
            a = self.owned_array(sc, free=1, dtypes=["int64", "float64"] if arg else ())
            if a.dtype == "bool":
                return
            n = r.randrange(1, a.shape[-1] + 1)
            tgt = self.target(sc, a, slice_len=n)
            s = self.slice_of(sc, r.choice("if"), n)
            if tgt is None or s is None or re.search(rf"\b{a.name}\[", s[0]):
                return
            if arg:
                f = r.choice([f"np.argsort({s[0]}, kind='stable')",
                              f"np.argsort({s[0]}, stable=True)", f"{s[0]}.argsort(kind='stable')"])
                t = "int64"
            else:
                f, t = f"np.sort({s[0]})", s[1]
            if t == a.dtype or np.can_cast(t, a.dtype, "safe"):
                self.emit(ind, f"{tgt} = {f}")
        elif x < 0.7:
            a = self.owned_array(sc, free=1)
            n = r.randrange(1, a.shape[-1] + 1)
            tgt = self.target(sc, a, slice_len=n)
            if tgt is not None:
                self.emit(ind, f"{tgt}.sort()")
        else:
            kk = r.choice("if")
            s = self.slice_of(sc, kk, r.randrange(1, 9))
            if s is None:
                return
            v = self.leaf(sc, r.choice([kk, "i", "f"]), True)
            side = r.choice(["", ", side='left'", ", side='right'"])
            k = self.fresh("k")
            self.emit(ind, f"{k} = np.searchsorted({s[0]}, {v.text}{side})")
            sc.vars[k] = E(k, "int64")
            sc.own[k] = sc.level
            self.store_of(sc, ind, sc.vars[k])

    def stmt_clips(self, sc: Scope, ind: int) -> None:
        """`o[.., lo:hi] = np.clip(s, lo, hi)` and its other spellings,
        `np.clip(.., out=o[.., lo:hi])`, `np.maximum(s1, s2, out=..)`,
        `o[.., lo:hi] = np.where(s1 > v, s1, s2)`, or a scalar local of
        `np.clip` / `np.where` stored (`clips`)."""
        r = self.r
        x = r.random()
        if x < 0.25:
            # a scalar: clip of an expression, or where of a condition
            e = self.expr(sc, r.choice("if"), 2)
            if x < 0.15:
                lo, hi = self.leaf(sc, kind(e.t), True), self.leaf(sc, r.choice("if"), True)
                tpl = "np.clip({0}, {1}, {2})"
            else:
                lo, hi = self.bool_expr(sc, 1), self.expr(sc, r.choice("if"), 1)
                tpl = "np.where({1}, {0}, {2})"
            if not all(self.fits(u, w.t) for u in (e, lo, hi) for w in (e, lo, hi)):
                return
            t = self.call_type(tpl, [e.t, lo.t, hi.t])
            if t is None or kind(t) == "b":
                return
            v = self.fresh("v")
            self.emit(ind, f"{v} = {tpl.format(e.text, lo.text, hi.text)}")
            sc.vars[v] = E(v, t, approx=e.approx or hi.approx)
            sc.own[v] = sc.level
            self.store_of(sc, ind, sc.vars[v])
            return
        n = r.randrange(1, 9)
        k0 = r.choice("iff")
        s1 = self.slice_of(sc, k0, n) or self.slice_of(sc, "f" if k0 == "i" else "i", n)
        if s1 is None:
            return
        a = self.owned_array(sc, free=1, dtypes=[s1[1], s1[1], "float64", "int64"])
        tgt = self.target(sc, a, slice_len=n)
        if tgt is None or re.search(rf"\b{a.name}\[", s1[0]):
            return
        k1 = "f" if kind(s1[1]) == "f" else "i"
        out = r.random() < 0.35
        if x < 0.65:
            lo, hi = self.leaf(sc, k1, True), self.leaf(sc, r.choice([k1, "i", "f"]), True)
            if not all(self.fits(u, w) for u in (lo, hi) for w in (s1[1], lo.t, hi.t)):
                return
            bounds = [lo.text, hi.text]
            if r.random() < 0.2:
                bounds[r.randrange(2)] = "None"
            t = self.call_type("np.clip({0}, {1}, {2})".replace(
                "{1}", "None" if bounds[0] == "None" else "{1}").replace(
                "{2}", "None" if bounds[1] == "None" else "{2}"), [s1[1], lo.t, hi.t])
            y = r.random()
            if out:
                f = f"np.clip({s1[0]}, {bounds[0]}, {bounds[1]}, out={tgt})"
            elif y < 0.4:
                f = f"np.clip({s1[0]}, {bounds[0]}, {bounds[1]})"
            elif y < 0.7 or "None" in bounds:
                f = f"{s1[0]}.clip({bounds[0]}, {bounds[1]})"
            else:
                f = f"{s1[0]}.clip(min={bounds[0]}, max={bounds[1]})"
        else:
            s2 = self.slice_of(sc, "f" if kind(s1[1]) == "f" and r.random() < 0.7 else "i", n)
            if s2 is None or re.search(rf"\b{a.name}\[", s2[0]):
                return
            if x < 0.8:
                g = r.choice(["maximum", "minimum", "fmax", "fmin"])
                t = self.call_type(f"np.{g}({{0}}, {{1}})", [s1[1], s2[1]])
                f = f"np.{g}({s1[0]}, {s2[0]}" + (f", out={tgt})" if out else ")")
            else:
                # the condition of exact values only: where is discontinuous
                v = self.leaf(sc, k1, True)
                if s1[2] or not self.fits(v, s1[1]):
                    return
                other = s2[0] if r.random() < 0.7 else self.literal(kind(s2[1])
                                                                     if kind(s2[1]) != "u"
                                                                     else "i")
                if not isinstance(other, str):
                    if not self.fits(other, s1[1]):
                        return
                    t = self.call_type("np.where(True, {0}, {1})", [s1[1], other.t])
                    other = other.text
                else:
                    t = self.call_type("np.where(True, {0}, {1})", [s1[1], s2[1]])
                op = r.choice([">", "<=", "!="])
                f = f"np.where({s1[0]} {op} {v.text}, {s1[0]}, {other})"
                out = False
        if t is None or not (t == a.dtype or np.can_cast(t, a.dtype, "safe")):
            return
        if sc.nest is not None and not out and r.random() < 0.3:
            self.emit(ind, f"parpy.label('{self.label(sc.nest, sc.depth)}')")
        self.emit(ind, f if out else f"{tgt} = {f}")

    def stmt_optional(self, sc: Scope, ind: int) -> None:
        """A read of the optional array `w0` under `if w0 is not None:`
        (`is None` with an `else:`, `w0 is None or w0[k] > v`, or a
        conditional expression), or a local of the optional float `z0`
        (`z0 if z0 is not None else v`, or re-bound under `if z0 is not
        None:`) stored (`none_args`)."""
        r = self.r
        w = self.optionals[0]
        a = self.owned_array(sc)
        tgt = self.target(sc, a)
        if tgt is None:
            return
        k = kind(a.dtype)
        if r.random() < 0.6:
            idx = self.index_any(sc, w["shape"][0])
            rd = E(f"w0[{idx.text}]", w["dtype"], leaf=kind(w["dtype"]) == "f")
            e = self.expr(sc, "i" if k == "u" else k, 1)
            both = self.combine(r.choice(["+", "*", "-"]), rd, e) or rd
            v1, v2 = self.cast_to(both, a), self.cast_to(e, a)
            if v1 is None or v2 is None:
                return
            y = r.random()
            if y < 0.3:
                self.emit(ind, "if w0 is not None:")
                self.emit(ind + 1, f"{tgt} = {v1}")
                if r.random() < 0.5:
                    self.emit(ind, "else:")
                    self.emit(ind + 1, f"{tgt} = {v2}")
            elif y < 0.55:
                self.emit(ind, "if w0 is None:")
                self.emit(ind + 1, f"{tgt} = {v2}")
                self.emit(ind, "else:")
                self.emit(ind + 1, f"{tgt} = {v1}")
            elif y < 0.8:
                lit = self.literal("f" if kind(w["dtype"]) == "f" else "i")
                if not self.fits(lit, w["dtype"]):
                    return
                self.emit(ind, f"if w0 is None or {rd.text} > {lit.text}:")
                self.emit(ind + 1, f"{tgt} = {v2}")
            else:
                self.emit(ind, f"{tgt} = {v1} if w0 is not None else {v2}")
            return
        v = self.fresh("v")
        lit = self.literal("f")
        if r.random() < 0.5:
            self.emit(ind, f"{v} = z0 if z0 is not None else {lit.text}")
        else:
            self.emit(ind, f"{v} = {lit.text}")
            self.emit(ind, r.choice(["if z0 is not None:", "if not (z0 is None):"]))
            self.emit(ind + 1, f"{v} = z0 * {self.literal('f').text}")
        sc.vars[v] = E(v, "wf", leaf=True)
        sc.own[v] = sc.level
        v1 = self.cast_to(sc.vars[v], a)
        if v1 is not None:
            self.emit(ind, f"{tgt} = {v1}")

    def stmt_index_idioms(self, sc: Scope, ind: int) -> None:
        """`np.unravel_index` / `np.ravel_multi_index`, `np.bitwise_count`,
        `max(.., key=abs)`, `initial=` of a reduction, or a store into a
        run-time slice (`index_idioms`)."""
        r = self.r
        x = r.random()
        if x < 0.25:
            # a flat index into the shape of an input (or a literal shape,
            # sizes by name too), unravelled, the element read, raveled back
            ins = [b for b in self.arrays if b.role == "in" and len(b.shape) >= 2]
            if not ins:
                return
            b = r.choice(ins)
            total = int(np.prod(b.shape))
            flat = self.index_any(sc, total)
            if flat.rng is None or flat.rng[0] < 0:
                flat = E(f"(({flat.text}) % {total})", "wi", rng=(0, total - 1))
            names = [self.fresh("r") for _ in b.shape]
            if r.random() < 0.5:
                shape = f"{b.name}.shape"
            else:
                dims = []
                for n in b.shape:
                    # (sizes by name when specialized: the dimensions must be
                    # known when compiling)
                    byname = [f"N{j}" for j, m in enumerate(self.sizes)
                              if m == n and self.specialize]
                    dims.append(r.choice(byname) if byname and r.random() < 0.5 else str(n))
                shape = f"({', '.join(dims)})" if r.random() < 0.7 else f"[{', '.join(dims)}]"
            self.emit(ind, f"{', '.join(names)} = np.unravel_index({flat.text}, {shape})")
            for nm, n in zip(names, b.shape):
                sc.vars[nm] = E(nm, "int64")
            a = self.owned_array(sc)
            tgt = self.target(sc, a)
            if tgt is None:
                return
            if r.random() < 0.5 or a.dtype == "bool":
                v = self.cast_to(E(f"{b.name}[{', '.join(names)}]", b.dtype,
                                   leaf=kind(b.dtype) == "f"), a)
            else:
                v = self.cast_to(E(f"np.ravel_multi_index(({', '.join(names)}), {shape})",
                                   "int64"), a)
            if v is not None:
                self.emit(ind, f"{tgt} = {v}")
            return
        if x < 0.4:
            # bitwise_count of an integer expression (or of a slice stored)
            if r.random() < 0.6:
                e = self.expr(sc, "i", 2, exact=True)
                if e.approx or (e.t == "wi" and (e.rng is None or not
                                                 -2**62 < e.rng[0] <= e.rng[1] < 2**62)):
                    return
                t = self.call_type("np.bitwise_count({0})", [e.t])
                if t is None:
                    return
                self.store_of(sc, ind, E(f"np.bitwise_count({e.text})", t))
                return
            n = r.randrange(1, 9)
            s1 = self.slice_of(sc, "i", n)
            if s1 is None or s1[1] == "bool":
                return
            a = self.owned_array(sc, free=1, dtypes=["uint8", "int16", "int64", "float64"])
            tgt = self.target(sc, a, slice_len=n)
            if tgt is None or re.search(rf"\b{a.name}\[", s1[0]):
                return
            self.emit(ind, f"{tgt} = np.bitwise_count({s1[0]})")
            return
        if x < 0.55:
            # max / min with a key, of two or three numbers of one type
            k = r.choice("iff")
            first = self.leaf(sc, k, True)
            t = first.t
            items = [first] + [e for e in (self.leaf(sc, k, True) for _ in range(4))
                               if e.t == t][:r.choice([1, 1, 2])]
            if len(items) == 1 or r.random() < 0.3:
                # the first's negation: a tie of keys, the first wins
                items.insert(r.randrange(len(items) + 1), E(
                    f"(-{first.text})", t, rng=first.rng and (-first.rng[1], -first.rng[0])))
            if any(e.approx for e in items) or kind(t) in "bu":
                return
            if t == "wi" and any(e.rng is None for e in items):
                return
            f = r.choice(["max", "min"])
            key = r.choice(["abs", "np.abs", "np.absolute"])
            self.store_of(sc, ind, E(f"{f}({', '.join(e.text for e in items)}, key={key})", t,
                                     leaf=kind(t) == "f", rng=(
                                         min(e.rng[0] for e in items),
                                         max(e.rng[1] for e in items)) if t == "wi" else None))
            return
        if x < 0.75:
            # a reduction with `initial=` (of an empty slice too)
            k = r.choice("iff")
            n = r.choice([1, 2, 3, 5])
            s1 = self.slice_of(sc, k, n) or self.slice_of(sc, "f" if k == "i" else "i", n)
            if s1 is None or s1[1] == "bool":
                return
            text = s1[0]
            if r.random() < 0.25:
                # the same row, none of it
                text = self.empty_row(text)
                if text is None:
                    return
            f = r.choice(["max", "min", "sum"])
            init = self.literal(kind(s1[1]) if kind(s1[1]) != "u" else "i")
            if init.t == "wi" and (init.rng[0] < 0 and kind(s1[1]) == "u"):
                return
            if not self.fits(init, s1[1]):
                return
            y = r.random()
            call = (f"np.{f}({text}, initial={init.text})" if y < 0.6 else
                    f"{text}.{f}(initial={init.text})")
            try:
                sample = np.ones(3, dtype=s1[1])
                v = getattr(np, f)(sample, initial={"wi": int, "wf": float}.get(
                    init.t, float)(eval(init.text)))
            except Exception:  # noqa: BLE001
                return
            t = v.dtype.name
            self.store_of(sc, ind, E(call, t, approx=s1[2] or (f == "sum" and kind(t) == "f")))
            return
        # a store into a run-time slice: both sides with the same run-time
        # bounds, inside both rows
        pair = self.store_arrays(sc)
        if pair is None:
            return
        b, a = pair
        m = min(a.shape[-1], b.shape[-1])
        ints = self.run_time_bounds(sc, m)
        if not ints:
            return
        lo, hi = r.choice(ints), r.choice(ints)
        if r.random() < 0.6 and lo.rng[1] < m:
            # a length past the start, the end inside both rows
            d = r.randrange(1, m - lo.rng[1] + 1)
            hi = E(f"{lo.text} + {d}", "wi", rng=(lo.rng[0] + d, lo.rng[1] + d))
        lo_t = "" if r.random() < 0.15 else lo.text
        hi_t = "" if b.shape[-1] == a.shape[-1] and r.random() < 0.15 else hi.text
        self.slice_store(sc, ind, a, b, f"{lo_t}:{hi_t}", f"{lo_t}:{hi_t}", False)

    def store_arrays(self, sc: Scope) -> Optional[Tuple[Arr, Arr]]:
        """An input array `b` (not bool) and an array `a` this scope writes
        that takes its type: a slice store's operand and target."""
        cands = [b for b in self.arrays if b.role == "in" and b.dtype != "bool"]
        if not cands:
            return None
        b = self.r.choice(cands)
        a = self.owned_array(sc, free=1, dtypes=[d for d in self.dtypes
                                                 if np.can_cast(b.dtype, d, "safe")])
        return b, a

    def slice_store(self, sc: Scope, ind: int, a: Arr, b: Arr, tgt_b: str, src_b: str,
                    extras: bool) -> None:
        """`a[.., tgt_b] = b[.., src_b]` (maybe `op v`) along the last
        dimensions; `extras`: maybe `+=`, maybe labelled."""
        r = self.r
        tgt = self.target(sc, a, slice_len=1)
        if tgt is None:
            return
        tgt = tgt[:tgt.rindex(", ") + 2] if ", " in tgt else f"{a.name}["
        tgt += f"{tgt_b}]"
        idx = [self.index_any(sc, n).text for n in b.shape[:-1]] + [src_b]
        e = E(f"{b.name}[{', '.join(idx)}]", b.dtype)
        if r.random() >= 0.3:
            o = self.literal("f" if kind(b.dtype) == "f" else "i")
            e = self.combine(r.choice(["+", "*", "-"]), e, o)
            if e is None:
                return
        if not (e.t == a.dtype or (e.t not in WEAK and np.can_cast(e.t, a.dtype, "safe"))):
            return
        op = "="
        if extras:
            op = "+=" if r.random() < 0.15 and kind(a.dtype) != "b" else "="
            if sc.nest is not None and r.random() < 0.3:
                self.emit(ind, f"parpy.label('{self.label(sc.nest, sc.depth)}')")
        self.emit(ind, f"{tgt} {op} {e.text}")

    def empty_row(self, text: str) -> Optional[str]:
        """The slice `text` (one subscript) with no element of its row
        (`c:c`), or None."""
        m = re.search(r"\[([^\[\]]*)\]$", text)
        if m is None or "][" in text:
            return None
        parts = m.group(1).split(", ")
        c = self.r.randrange(3)
        parts[-1] = f"{c}:{c}"
        return text[:m.start()] + "[" + ", ".join(parts) + "]"

    def run_time_bounds(self, sc: Scope, m: int) -> List[E]:
        """Python ints known only when the code runs (unless specialized) in
        [0, m]: loop variables, the sizes N0..N2, `Nj - d`, `c0`."""
        r = self.r
        ints = [e for e in sc.vars.values() if e.t == "wi" and e.rng is not None
                and 0 <= e.rng[0] and e.rng[1] <= m]
        ints += [E(f"N{j}", "wi", rng=(n, n)) for j, n in enumerate(self.sizes) if n <= m]
        ints += [E(f"N{j} - {n - d}", "wi", rng=(d, d)) for j, n in enumerate(self.sizes)
                 if n > 1 for d in [r.randrange(n)] if d <= m]
        c = self.scalars[3]["value"]
        if self.scalars[3]["kind"] == "int" and 0 <= c <= m:
            ints.append(E("c0", "wi", rng=(c, c)))
        return ints

    def run_time_span(self, sc: Scope, m: int, least: int) -> Optional[Tuple[E, E]]:
        """Run-time bounds `lo`, `hi` in [0, m] with `hi - lo >= least`
        wherever the code runs (their ranges say so), or None."""
        r = self.r
        ints = self.run_time_bounds(sc, m)
        if not ints:
            return None
        lo = r.choice(ints)
        if lo.rng[1] + least > m:
            return None
        cands = [e for e in ints if e.rng[0] >= lo.rng[1] + least]
        if cands and r.random() < 0.4:
            return lo, r.choice(cands)
        d = r.randrange(max(least, 1), m - lo.rng[1] + 1) if m - lo.rng[1] >= max(least, 1) \
            else least
        return lo, E(f"{lo.text} + {d}" if d else lo.text, "wi",
                     rng=(lo.rng[0] + d, lo.rng[1] + d))

    def stmt_run_time_blocks(self, sc: Scope, ind: int) -> None:
        """A whole reduction of a 2-D block whose four bounds are known only
        when the code runs, or a 1-D slice store with run-time bounds whose
        operand has other bounds of the same length (or one element)
        (`run_time_blocks`)."""
        r = self.r
        if r.random() < 0.6:
            ins = [b for b in self.arrays if b.role == "in" and len(b.shape) >= 2]
            if not ins:
                return
            b = r.choice(ins)
            f = r.choice(["sum", "sum", "mean", "max", "min", "any", "count_nonzero", "nansum",
                          "nanmax"])
            if b.dtype == "bool" and f not in ("sum", "any", "count_nonzero"):
                return
            if kind(b.dtype) != "f" and f.startswith("nan"):
                f = f[3:]
            least = 0 if f in ("sum", "nansum", "any", "count_nonzero") else 1
            nd = 3 if len(b.shape) >= 3 and r.random() < 0.3 else 2
            spans = [self.run_time_span(sc, n, least) for n in b.shape[-nd:]]
            if None in spans:
                return
            idx = [self.index_any(sc, n).text for n in b.shape[:-nd]]
            for (lo, hi), n in zip(spans, b.shape[-nd:]):
                y = r.random()
                if y < 0.1 and lo.rng[1] + least <= n:
                    idx.append(f"{lo.text}:")  # (to the end)
                elif y < 0.2 and hi.rng[0] >= least:
                    idx.append(f":{hi.text}")
                else:
                    idx.append(f"{lo.text}:{hi.text}")
            block = f"{b.name}[{', '.join(idx)}]"
            y = r.random()
            method = f in ("sum", "mean", "max", "min", "any")
            call = f"{block}.{f}()" if method and y >= 0.5 else f"np.{f}({block})"
            with np.errstate(all="ignore"):
                t = np.asarray(getattr(np, f)(np.ones((2, 2), dtype=b.dtype))).dtype.name
            approx = kind(t) == "f" and f in ("sum", "mean", "nansum")
            if r.random() < 0.4:
                v = self.fresh("t")
                if sc.nest is not None and r.random() < 0.5:
                    # a labelled (parallel) reduction of the block
                    self.emit(ind, f"parpy.label('{self.label(sc.nest, sc.depth)}')")
                self.emit(ind, f"{v} = {call}")
                sc.vars[v] = E(v, t, approx=approx)
                sc.own[v] = sc.level
                call = v
            self.store_of(sc, ind, E(call, t, approx=approx, leaf=kind(t) == "f" and not approx))
            return
        # o[.., a:b] = x[.., c:d] op v: the same length at other bounds, or
        # one element broadcast
        pair = self.store_arrays(sc)
        if pair is None:
            return
        b, a = pair
        span = self.run_time_span(sc, a.shape[-1], 0)
        if span is None:
            return
        lo, hi = span
        n = b.shape[-1]
        ones = self.run_time_bounds(sc, n - 1)
        if ones and r.random() < 0.2:
            # one element where it runs: it broadcasts
            c = r.choice(ones).text
            src_b = f"{c}:{c} + 1"
        else:
            # shifted by s, inside the operand's row
            shifts = [s_ for s_ in range(-lo.rng[0], n - hi.rng[1] + 1) if s_ != 0]
            if not shifts:
                return
            s_ = r.choice(shifts)
            sh = f" + {s_}" if s_ > 0 else f" - {-s_}"
            src_b = f"{lo.text}{sh}:{hi.text}{sh}"
        self.slice_store(sc, ind, a, b, f"{lo.text}:{hi.text}", src_b, True)

    def message_value(self, sc: Scope) -> Optional[Tuple[str, str]]:
        """A field of a message: an exact value (a loop variable, a scalar,
        an element, an integer expression) and a conversion or a format spec
        its type takes (`!r`, `:.3f` or none)."""
        r = self.r
        x = r.random()
        if x < 0.5:
            e = self.leaf(sc, r.choice("iifb"), True)
        elif x < 0.75:
            e = self.expr(sc, "i", 1, exact=True)
        else:
            # (no math function: its last bit may differ from NumPy's)
            e = self.leaf(sc, "f", True)
            e = self.combine(r.choice(["+", "*", "-"]), e, self.literal("f")) or e
        if e.approx or (e.t == "wi" and e.rng is None):
            return None
        k = kind(e.t)
        specs = {"f": [":.3f", ":.2e", ":>10.4f", ":g", ":+.1f", ":>8", ":<9", ":^10.2f",
                       ":.0f"],
                 "i": [":d", ":>8", ":x", ":05d", ":+d", ":,", ":#x"],
                 "b": [":>6", ":d"]}[k if k != "u" else "i"]
        spec = r.choice(["", "", "!r", "!s"] + specs)
        if spec.startswith(":"):
            try:
                format(_sample(e.t) if e.t in WEAK else np.dtype(e.t).type(1), spec[1:])
            except Exception:  # noqa: BLE001
                spec = ""
        return e.text.replace('"', "'"), spec

    def message(self, sc: Scope) -> str:
        """A message that names values, starting `chkN:`: an f-string, or
        (`message_forms`) the same text built by `str.format`, by `%` or by
        `+` of literals and `str` / `repr` / `format` of each value."""
        self.nchecks += 1
        items: List[Tuple[str, Optional[Tuple[str, str]]]] = [(f"chk{self.nchecks}:", None)]
        for _ in range(self.r.choice([1, 2, 3, 4, 8])):
            v = self.message_value(sc)
            if v is not None:
                items.append((" " + self.r.choice(["", "v=", "{at}", "|"]), v))
        if self.side("message_forms", 0.5):
            with self.drawing_from("message_forms"):
                form = self.r.choice(["format", "format", "percent", "concat"])
                if form == "percent" and all(
                        v is None or _printf_spec(v[1]) is not None for _, v in items):
                    return _percent_message(items)
                if form == "concat":
                    return _concat_message(items, self.r)
                return _format_message(items, self.r)
        text = "".join(lit.replace("{", "{{").replace("}", "}}")
                       + (f"{{{v[0]}{v[1]}}}" if v else "") for lit, v in items)
        return f'f"{text}"'

    def stmt_check_message(self, sc: Scope, ind: int) -> None:
        """An `assert` with an f-string message that holds, or the one check
        of the program that may fail: `assert c, f".."` or `if not c: raise
        ValueError(f"..")`, at one point of the parallel loops around it
        (`check_messages`)."""
        r = self.r
        if self.armed or self.in_helper or r.random() < 0.4:
            cond = self.holding_condition(sc)
            if cond is not None:
                self.emit(ind, f"assert {cond}, {self.message(sc)}")
            return
        # a condition the data decides: an element against a number, or
        # any exact condition
        if r.random() < 0.7:
            k = r.choice("iff")
            a = self.read_array(sc, k)
            if a is None or a.approx:
                return
            lit = r.choice(["0", "1", "5", "(-2)"] if k == "i" else ["0.0", "0.5", "-1.5", "1.25"])
            if kind(a.t) == "u" and lit.startswith("("):
                return
            cond = f"{a.text} {r.choice(['<', '<=', '>', '>=', '!='])} {lit}"
        else:
            cond = self.cond(sc)
        self.armed = True
        # one point of the parallel loops (a value their counters take)
        here = [f"{v} == {sc.vars[v].rng[0] if v in sc.vars and sc.vars[v].rng else 0}"
                for v, _ in sc.par]
        msg = self.message(sc)
        if r.random() < 0.5:
            if here:
                self.emit(ind, f"if {' and '.join(here)}:")
                ind += 1
            self.emit(ind, f"assert {cond}, {msg}")
        else:
            self.emit(ind, f"if {' and '.join(here + [f'not ({cond})'])}:")
            self.emit(ind + 1, f"raise ValueError({msg})")

    def stmt_sorted(self, sc: Scope, ind: int) -> None:
        """`sorted((a, b, ..))[k]` (a key, reverse=) of 2 to 8 numbers of one
        type, or unpacked (`sorted_items`)."""
        r = self.r
        k = r.choice("iiff")
        first = self.leaf(sc, k, True)
        if first.approx or (first.t == "wi" and first.rng is None):
            return
        items = [first]
        for _ in range(r.randint(1, 7) * 3):
            e = self.leaf(sc, k, True) if r.random() < 0.7 else self.expr(sc, k, 1, exact=True)
            if e.t == first.t and not e.approx and not (e.t == "wi" and e.rng is None):
                items.append(e)
            if len(items) == 8:
                break
        items = items[:r.randint(2, max(2, len(items)))]
        if len(items) < 2:
            return
        if len(items) < 8 and kind(first.t) != "u" and r.random() < 0.3:
            # the first's negation: a tie of keys under key=abs
            items.insert(r.randrange(len(items) + 1), E(
                f"(-{first.text})", first.t,
                rng=first.rng and (-first.rng[1], -first.rng[0])))
        kw = ""
        if r.random() < 0.4 and kind(first.t) != "u":
            kw += f", key={r.choice(['abs', 'np.abs'])}"
        if r.random() < 0.4:
            kw += f", reverse={r.choice(['True', 'False'])}"
        lit = f"({', '.join(e.text for e in items)})" if r.random() < 0.6 else \
            f"[{', '.join(e.text for e in items)}]"
        call = f"sorted({lit}{kw})"
        rng = (min(e.rng[0] for e in items), max(e.rng[1] for e in items)) \
            if first.t == "wi" else None
        if r.random() < 0.3:
            names = [self.fresh("q") for _ in items]
            self.emit(ind, f"{', '.join(names)} = {call}")
            for nm in names:
                sc.vars[nm] = E(nm, first.t, rng=rng, leaf=kind(first.t) == "f")
                sc.own[nm] = sc.level
            self.store_of(sc, ind, sc.vars[r.choice(names)])
            return
        j = r.randrange(-len(items), len(items))
        self.store_of(sc, ind, E(f"{call}[{j}]", first.t, rng=rng, leaf=kind(first.t) == "f"))

    def stmt_masked_where(self, sc: Scope, ind: int) -> None:
        """`np.sum(s, where=m)` / `np.max(s, where=m, initial=v)` and the
        methods of a 1-D slice, the mask a bool slice of its length or a
        comparison of one (`masked_where`)."""
        r = self.r
        n = r.choice([1, 2, 3, 5, 8])
        k = r.choice("iff")
        x = r.random()
        s1 = self.multi_slice_of(sc, k) if x >= 0.85 else self.slice_of(sc, k, n)
        if s1 is None or s1[1] == "bool":
            return
        if x >= 0.85:
            x = 0.5  # (a mask of the same shape: the operand compared)
        if x < 0.35:
            m = self.slice_of(sc, "b", n)
            if m is None:
                return
            mask = m[0]
        else:
            s2 = s1 if x < 0.7 else self.slice_of(sc, r.choice("if"), n)
            if s2 is None or s2[2] or s2[1] == "bool":
                return
            lit = self.literal("f" if kind(s2[1]) == "f" else "i")
            if not self.fits(lit, s2[1]) or (kind(s2[1]) == "u" and lit.text.startswith("(")):
                return
            mask = f"{s2[0]} {r.choice(['>', '<=', '!='])} {lit.text}"
        f = r.choice(["sum", "sum", "max", "min"])
        init = None
        if f != "sum" or r.random() < 0.3:
            init = self.literal(kind(s1[1]) if kind(s1[1]) != "u" else "i")
            if not self.fits(init, s1[1]) or (kind(s1[1]) == "u" and init.rng[0] < 0):
                return
        kws = [f"where={mask}"] + ([f"initial={init.text}"] if init is not None else [])
        r.shuffle(kws)
        call = (f"np.{f}({s1[0]}, {', '.join(kws)})" if r.random() < 0.6 else
                f"{s1[0]}.{f}({', '.join(kws)})")
        try:
            v = getattr(np, f)(np.ones(3, dtype=s1[1]), where=np.array([True, False, True]),
                               **({"initial": eval(init.text)} if init is not None else {}))
        except Exception:  # noqa: BLE001
            return
        t = v.dtype.name
        approx = s1[2] or (f == "sum" and kind(t) == "f")
        self.store_of(sc, ind, E(call, t, approx=approx, leaf=kind(t) == "f" and not approx))

    def stmt_int_initial(self, sc: Scope, ind: int) -> None:
        """`initial=` of a reduction of an integer slice, a value of the
        slice's type: an element of such an array, `np.int16(v)`, the type's
        least or greatest value, `c0` (`int_initial`)."""
        r = self.r
        n = r.choice([0, 1, 2, 3, 5])
        s1 = self.slice_of(sc, "i", max(n, 1))
        if s1 is None or s1[1] == "bool":
            return
        t0 = s1[1]
        text = s1[0] if n else self.empty_row(s1[0])
        if text is None:
            return
        info = np.iinfo(np.dtype(t0))
        x = r.random()
        same = [b for b in self.arrays if b.role == "in" and b.dtype == t0]
        c0 = self.scalars[3]
        if x < 0.3 and same:
            b = r.choice(same)
            init = f"{b.name}[{', '.join(self.index_any(sc, m).text for m in b.shape)}]"
        elif x < 0.5:
            v = r.choice([int(info.min), int(info.max), 0, 1, int(info.max) // 2])
            init = f"np.{t0}({v})"
        elif x < 0.8:
            v = r.choice([int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1])
            if v > 2**63 - 1:
                v = 2**63 - 1  # (a Python int of parpy's is an int64)
            init = f"({v})" if v < 0 else str(v)
        elif c0["kind"] in ("int", f"np.{t0}") and info.min <= c0["value"] <= info.max:
            init = "c0"
        else:
            return
        f = r.choice(["max", "min", "sum"])
        call = (f"np.{f}({text}, initial={init})" if r.random() < 0.6 else
                f"{text}.{f}(initial={init})")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = getattr(np, f)(np.ones(3, dtype=t0), initial=np.dtype(t0).type(1)).dtype.name
        self.store_of(sc, ind, E(call, t))

    def stmt_reduce(self, sc: Scope, ind: int) -> None:
        """`t = parpy.operators.op(slice)`, labelled (parallel) or not."""
        k = self.r.choice("if")
        e = self.reduce_expr(sc, k)
        if e is None:
            return
        name = self.fresh("t")
        # (a generator's loop is sequential: it takes no label; nor do the
        # counting searches of `order_stats`, nor `np.interp`)
        sequential = e.text.startswith(("np.median", "np.percentile", "np.quantile", "np.argm",
                                        "np.interp", "math.prod", "max(*", "min(*"))
        if sc.nest is not None and " for v in " not in e.text and not e.text.endswith("]") \
                and not sequential and self.r.random() < 0.6:
            self.emit(ind, f"parpy.label('{self.label(sc.nest, sc.depth)}')")
        self.emit(ind, f"{name} = {e.text}")
        sc.vars[name] = E(name, e.t, approx=e.approx)
        sc.own[name] = sc.level

    def stmt_par_reduction(self, sc: Scope, ind: int) -> None:
        r = self.r
        if sc.nest is None:
            return
        k = r.choice("iif")
        t = r.choice([d for d in self.dtypes if kind(d) == ("f" if k == "f" else "i")]
                     + (["uint32", "uint64"] if k == "i" else []))
        if t == "float16" and not self.on("f16_reduce", 0.5):
            return
        acc = self.fresh("acc")
        op = r.choice(["+", "max", "min"] + (["*"] if k == "i" else []))
        init = {"+": "0", "*": "1", "max": "0", "min": "0"}[op]
        self.emit(ind, f"{acc} = parpy.builtin.convert({init}, parpy.types.{_short(t)})")
        n = r.choice(self.sizes)
        v = self.fresh("r")
        lab = self.label(sc.nest, sc.depth, reduction=True)
        self.emit(ind, f"parpy.label('{lab}')")
        self.emit(ind, f"for {v} in range({n}):")
        inner = sc.child(level=sc.level + 1)
        inner.vars[v] = E(v, "wi", rng=(0, n - 1))
        e = self.expr(inner, k, 2)
        if "parpy.operators." in e.text or "parpy.reduce." in e.text or "parpy.sum(" in e.text:
            if not self.on("reduce_in_par_reduction", 1.0):
                e = self.leaf(inner, k, False)
        if e.t != t:
            if e.approx and k != "f":
                e = self.leaf(inner, k, True)
            e = E(f"parpy.builtin.convert({e.text}, parpy.types.{_short(t)})", t)
        if op == "*":
            e = E(f"(({e.text} & 3) + 1)", t)  # keeps the product from overflowing early
            if result_type("&", t, "wi") != t:
                return
        if op in ("max", "min"):
            self.emit(ind + 1, f"{acc} = {op}({acc}, {e.text})")
        elif r.random() < 0.5:
            self.emit(ind + 1, f"{acc} {op}= {e.text}")
        else:
            self.emit(ind + 1, f"{acc} = {acc} {op} {e.text}")
        sc.vars[acc] = E(acc, t, approx=k == "f")
        sc.own[acc] = sc.level

    def natural_for(self, sc: Scope, ind: int, budget: int) -> bool:
        """A sequential loop over input arrays (a 1-D one, or one row of a
        2-D one): `for v in ...`, `enumerate`, `zip` or `reversed`."""
        r = self.r
        rows = []
        for a in self.arrays:
            if a.role != "in" or len(a.shape) not in (1, 2):
                continue
            if len(a.shape) == 1:
                rows.append((a.name, a.shape[0], a.dtype))
            else:
                k = r.randrange(a.shape[0])
                rows.append((f"{a.name}[{k}, :]", a.shape[1], a.dtype))
        if not rows:
            return False
        inner = sc.child()
        inner.loop = "for"
        (src, n, t), (src2, n2, t2) = r.choice(rows), r.choice(rows)
        v = self.fresh("v")
        elem = lambda name, t: E(name, t, leaf=kind(t) == "f")  # noqa: E731
        wide = [a for a in self.arrays if a.role == "in" and len(a.shape) == 2
                and a.shape[1] >= 2]
        if wide and self.on("tuple_locals", 0.3):
            # the rows of a 2-D slice, unpacked
            a = r.choice(wide)
            lo = r.randrange(a.shape[1] - 1)
            w = self.fresh("w")
            self.emit(ind, f"for {v}, {w} in {a.name}[:, {lo}:{lo + 2}]:")
            inner.vars[v], inner.vars[w] = elem(v, a.dtype), elem(w, a.dtype)
            self.block(inner, ind + 1, budget - 1, allow_par=False)
            self.loop_else(sc, ind, budget)
            return True
        form = r.choice(["plain", "enumerate", "zip", "reversed"])
        if form == "plain":
            self.emit(ind, f"for {v} in {src}:")
        elif form == "reversed":
            self.emit(ind, f"for {v} in reversed({src}):")
        elif form == "enumerate":
            j = self.fresh("j")
            start = r.choice([0, 0, 1, 3])
            self.emit(ind, f"for {j}, {v} in enumerate({src}, {start}):")
            inner.vars[j] = E(j, "wi", rng=(start, start + n - 1))
        else:
            w = self.fresh("w")
            self.emit(ind, f"for {v}, {w} in zip({src}, {src2}):")
            inner.vars[w] = elem(w, t2)
        inner.vars[v] = elem(v, t)
        self.block(inner, ind + 1, budget - 1, allow_par=False)
        self.loop_else(sc, ind, budget)
        return True

    def jam_for(self, sc: Scope, ind: int) -> bool:
        """A loop over the last dimension of an output array whose body
        accumulates over an inner loop and stores the result at `j`
        (`passes::cpu_unroll_jam` runs such loops eight iterations at a
        time on Cpu)."""
        r = self.r
        a = self.owned_array(sc)
        nfixed = a.depth if sc.nest is not None else 0
        if a.dtype == "bool" or len(a.shape) <= nfixed or a.shape[-1] < 8:
            # a new output array with a last dimension of at least 8
            prefix = [n for _, n in sc.par] if sc.nest is not None else []
            dt = r.choice([d for d in self.dtypes if d != "bool"] or ["float32"])
            a = self.new_array(dt, prefix + [r.choice([8, 9, 16, 21, 40])], "out")
            a.unit, a.depth = sc.unit, (sc.depth if sc.nest is not None else 0)
            nfixed = a.depth if sc.nest is not None else 0
        t = _short(a.dtype)
        j, kv, acc = self.fresh("j"), self.fresh("k"), self.fresh("acc")
        # the bounds: constants, or the size parameters N0..N2 (run-time
        # values when not specialized)
        m = a.shape[-1]
        sized = lambda n: [f"N{k}" for k, v in enumerate(self.sizes) if v == n]  # noqa: E731
        lo = r.choice([0, 0, 0, 1, 2])
        hi = r.choice(sized(m) + [str(m)]) if r.random() < 0.6 else str(m)
        outer = sc.child()
        outer.loop = "for"
        outer.vars[j] = E(j, "wi", rng=(lo, m - 1))
        idx = [sc.par[d][0] for d in range(nfixed)]
        idx += [self.index_any(outer, n).text for n in a.shape[nfixed:-1]] + [j]
        def value(scope: Scope) -> Optional[str]:
            # mostly one that does not read `a` (a loop that reads what it
            # writes is left alone: both kinds are tried)
            for _ in range(3):
                v = self.store_value(scope, a)
                if v is not None and f"{a.name}[" not in v:
                    return v
            return v

        init = value(outer) or "0"
        n = r.choice(self.sizes)
        inner_hi = r.choice(sized(n) + [str(n)])
        inner = outer.child()
        inner.vars[kv] = E(kv, "wi", rng=(0, n - 1))
        v = value(inner)
        if v is None:
            return False
        op = r.choice(["+", "+", "-", "max", "min"])
        step = f"{op}({acc}, {v})" if op in ("max", "min") else f"{acc} {op} ({v})"
        self.emit(ind, f"for {j} in range({lo}, {hi}):")
        self.emit(ind + 1, f"{acc} = parpy.builtin.convert({init}, parpy.types.{t})")
        self.emit(ind + 1, f"for {kv} in range({inner_hi}):")
        self.emit(ind + 2, f"{acc} = parpy.builtin.convert({step}, parpy.types.{t})")
        self.emit(ind + 1, f"{a.name}[{', '.join(idx)}] = {acc}")
        return True

    def stmt_seq_for(self, sc: Scope, ind: int, budget: int) -> None:
        r = self.r
        if self.on("natural_loops", 0.3) and self.natural_for(sc, ind, budget):
            return
        if self.on("jam_loops", 0.4) and self.jam_for(sc, ind):
            return
        v = self.fresh("s")
        n = r.choice([1, 2, 3, 4])
        lo = r.choice([0, 0, 1])
        if self.on("tuple_loops", 0.35):
            # the same range of values, in any order, maybe with weights
            vals = [r.randint(lo, lo + n - 1) for _ in range(r.choice([1, 2, 3, 4]))]
            inner = sc.child()
            inner.vars[v] = E(v, "wi", rng=(min(vals), max(vals)))
            if r.random() < 0.5:
                w = self.fresh("w")
                ws = [r.choice(["0.5", "0.25", "-1.5", "2.0"]) for _ in vals]
                targets, items = f"{v}, {w}", [f"({a}, {b})" for a, b in zip(vals, ws)]
                literal = f"({', '.join(items)},)"
                inner.vars[w] = E(w, "wf", leaf=True)
            else:
                targets, items = v, [str(a) for a in vals]
                literal = f"[{', '.join(items)}]"
            if self.on("tuple_locals", 0.4):
                # (the tuple named first)
                t = self.fresh("t")
                self.emit(ind, f"{t} = ({', '.join(items)},)")
                literal = t
            self.emit(ind, f"for {targets} in {literal}:")
            inner.loop = "for"
            self.block(inner, ind + 1, budget - 1, allow_par=sc.nest is not None)
            self.loop_else(sc, ind, budget)
            return
        backwards = r.random() < 0.3
        if "run_time_step" not in self.avoid and self.step_r.random() < 0.5:
            # (the same values or fewer, in either order)
            self.features.add("run_time_step")
            self.emit(ind, f"for {v} in range({lo}, {lo + n}, st0):" if self.step > 0 else
                      f"for {v} in range({lo + n - 1}, {lo - 1}, st0):")
        elif backwards:
            self.emit(ind, f"for {v} in range({lo + n - 1}, {lo - 1}, -1):")
        else:
            self.emit(ind, f"for {v} in range({lo}, {lo + n}):")
        inner = sc.child()
        inner.vars[v] = E(v, "wi", rng=(lo, lo + n - 1))
        inner.loop = "for"
        self.block(inner, ind + 1, budget - 1, allow_par=sc.nest is not None)
        self.loop_else(sc, ind, budget)

    def loop_else(self, sc: Scope, ind: int, budget: int) -> None:
        """`else:` after a sequential loop (it runs unless the loop broke)."""
        if self.on("jumps", 0.25):
            self.emit(ind, "else:")
            self.block(sc.child(), ind + 1, budget - 1, allow_par=False)

    def stmt_if(self, sc: Scope, ind: int, budget: int) -> None:
        self.emit(ind, f"if {self.cond(sc)}:")
        self.block(sc.child(), ind + 1, budget - 1, allow_par=False)
        if self.r.random() < 0.5:
            self.emit(ind, "else:")
            self.block(sc.child(), ind + 1, budget - 1, allow_par=False)

    def stmt_while(self, sc: Scope, ind: int, budget: int) -> None:
        w = self.fresh("w")
        n = self.r.choice([1, 2, 3])
        self.emit(ind, f"{w} = 0")
        self.emit(ind, f"while {w} < {n}:")
        inner = sc.child()
        inner.vars[w] = E(w, "wi", rng=(0, n - 1))
        inner.loop = "while"  # (a `continue` would skip the `+= 1`)
        self.block(inner, ind + 1, budget - 1, allow_par=False)
        self.emit(ind + 1, f"{w} += 1")
        self.loop_else(sc, ind, budget)

    def par_loop(self, sc: Scope, ind: int, nest: Nest, budget: int) -> None:
        """A labelled parallel loop at level `sc.depth` of `nest`."""
        r = self.r
        level = sc.depth
        if len(nest.extents) <= level:
            k = r.randrange(3)
            nest.extents.append((f"N{k}", self.sizes[k]))
        ename, ext = nest.extents[level]
        v = self.fresh("i")
        lab = self.label(nest, level)
        self.emit(ind, f"parpy.label('{lab}')")
        x = r.random()
        if x < 0.5:
            rng_text, lo, hi = f"range({ename})", 0, ext - 1
        elif x < 0.65:
            rng_text, lo, hi = f"range({ext - 1}, -1, -1)", 0, ext - 1
        elif x < 0.8 and ext > 1:
            rng_text, lo, hi = f"range(1, {ename})", 1, ext - 1
        else:
            st = r.choice([2, 3])
            rng_text, lo, hi = f"range(0, {ename}, {st})", 0, ext - 1
        self.emit(ind, f"for {v} in {rng_text}:")
        inner = sc.child(par=sc.par + [(v, ext)], level=sc.level + 1)
        inner.vars[v] = E(v, "wi", rng=(lo, hi))
        inner.loop = "par"
        self.block(inner, ind + 1, budget - 1, allow_par=level < 2, first_store=True)

    def holding_condition(self, sc: Scope) -> Optional[str]:
        """A condition that holds: a parallel counter below its extent, or
        an exact integer expression equal to itself (None: none here)."""
        r = self.r
        if sc.par and r.random() < 0.5:
            v, ext = r.choice(sc.par)
            return f"0 <= {v} < {ext}"
        e = self.expr(sc, "i", 2, exact=True)
        return None if e.approx else f"{e.text} == {e.text}"

    def stmt_assert(self, sc: Scope, ind: int) -> None:
        """An `assert` that holds: the check must neither fire nor change
        what the program computes."""
        r = self.r
        cond = self.holding_condition(sc)
        if cond is None:
            return
        msg = f', "{r.choice(["holds", "a counter in range"])}"' if r.random() < 0.5 else ""
        self.emit(ind, f"assert {cond}{msg}")

    def stmt_jump(self, sc: Scope, ind: int) -> None:
        """`if c: break` / `if c: continue` for the loop around (no `break`
        of a parallel loop, no `continue` of the `while` loops made here)."""
        word = {"par": "continue", "while": "break"}.get(sc.loop or "") \
            or self.r.choice(["break", "continue"])
        self.emit(ind, f"if {self.cond(sc)}:")
        self.emit(ind + 1, word)

    def block(self, sc: Scope, ind: int, budget: int, allow_par: bool,
              first_store: bool = False) -> None:
        r = self.r
        n = r.randrange(1, 4)
        start = len(self.lines)
        for j in range(n):
            x = r.random()
            if not (first_store and j == 0):
                self.side_stmt(sc, ind, budget)  # (besides the one drawn below)
            if first_store and j == 0:
                self.stmt_store(sc, ind)
            elif sc.loop is not None and self.on("jumps", 0.1):
                self.stmt_jump(sc, ind)
            elif self.on("asserts", 0.05):
                self.stmt_assert(sc, ind)
            elif self.on("scans", 0.2):
                self.stmt_scan(sc, ind)
            elif self.on("windows", 0.1):
                self.stmt_window(sc, ind)
            elif sc.par and self.on("local_arrays", 0.2):
                self.stmt_local_array(sc, ind)
            elif sc.par and self.on("local_copies", 0.15):
                self.stmt_local_copy(sc, ind)
            elif self.on("lists", 0.1):
                self.stmt_list(sc, ind)
            elif sc.par and self.on("masked_reads", 0.1):
                self.stmt_masked(sc, ind)
            elif sc.par and self.on("hoisted", 0.1):
                self.stmt_hoisted(sc, ind)
            elif self.on("multi_labels", 0.25):
                self.stmt_slice2(sc, ind)
            elif x < 0.3 or budget <= 0:
                self.stmt_store(sc, ind)
            elif x < 0.42:
                self.stmt_local(sc, ind)
            elif x < 0.52 and allow_par and sc.nest is not None:
                self.par_loop(sc, ind, sc.nest, budget)
            elif x < 0.6:
                self.stmt_seq_for(sc, ind, budget)
            elif x < 0.68:
                self.stmt_if(sc, ind, budget)
            elif x < 0.73:
                self.stmt_while(sc, ind, budget)
            elif x < 0.81:
                self.stmt_reduce(sc, ind)
            elif x < 0.88:
                self.stmt_par_reduction(sc, ind)
            elif x < 0.95 or sc.nest is None:
                self.stmt_slice(sc, ind)
            else:
                self.stmt_atomic(sc, ind)
        if len(self.lines) == start:
            self.emit(ind, "pass") if budget <= 0 else self.stmt_store(sc, ind)
            if len(self.lines) == start:
                self.emit(ind, "pass")

    def side_stmt(self, sc: Scope, ind: int, budget: int) -> bool:
        """Maybe a statement of a stop-57 feature here, drawn from its own
        stream (whether it comes and what it says)."""
        for feature, p, stmt in (
                ("data_while", 0.06, lambda: self.stmt_data_while(sc, ind)),
                ("helper_tuples", 0.04, lambda: self.stmt_helper_tuple(sc, ind)),
                ("scalar_updates", 0.06, lambda: self.stmt_scalar_updates(sc, ind)),
                ("new_math", 0.02, lambda: self.stmt_dtype_if(sc, ind, budget)),
                ("sort_search", 0.04, lambda: self.stmt_sort_search(sc, ind)),
                ("clips", 0.05, lambda: self.stmt_clips(sc, ind)),
                ("none_args", 0.25 if self.optionals else 0.0,
                 lambda: self.stmt_optional(sc, ind)),
                ("index_idioms", 0.08, lambda: self.stmt_index_idioms(sc, ind)),
                ("run_time_blocks", 0.08, lambda: self.stmt_run_time_blocks(sc, ind)),
                ("check_messages", 0.06, lambda: self.stmt_check_message(sc, ind)),
                ("sorted_items", 0.05, lambda: self.stmt_sorted(sc, ind)),
                ("masked_where", 0.06, lambda: self.stmt_masked_where(sc, ind)),
                ("int_initial", 0.06, lambda: self.stmt_int_initial(sc, ind))):
            if (feature != "new_math" or budget > 0) and self.side(feature, p):
                with self.drawing_from(feature):
                    stmt()
                return True
        return False

    def skew_pair(self, ind: int) -> bool:
        """Two labelled parallel loops over the same rows of `p` and `q`:
        the first writes `q` at row `i + w1` from rows `i + c` of `p`, the
        second writes `p` at row `i + w2` from rows of `q` (each loop alone
        is race free; together they form a stencil step)."""
        r = self.r
        tall = [k for k, n in enumerate(self.sizes) if n >= 5]
        if not tall:
            return False
        k = r.choice(tall)
        rows, cols = self.sizes[k], r.choice(self.sizes)
        dt = r.choice(["float64", "float32", "int32", "int64"])
        p, q = self.new_array(dt, [rows, cols], "out"), self.new_array(dt, [rows, cols], "out")
        for a in (p, q):
            a.unit, a.depth = -1, -1   # no other statement writes them
        reads1 = sorted(set(r.choice([-2, -1, -1, 0, 0, 1, 1, 2]) for _ in range(r.randrange(1, 4))))
        reads2 = sorted(set(r.choice([-2, -1, -1, 0, 0, 1, 1, 2]) for _ in range(r.randrange(1, 4))))
        w1, w2 = r.choice([0, 0, 0, 1, -1]), r.choice([0, 0, 0, 1, -1])
        offs = reads1 + reads2 + [w1, w2]
        lo, cut = max(0, -min(offs)), max(0, max(offs))
        hi = f"N{k} - {cut}" if cut else f"N{k}"
        if rows - cut - lo < 1:
            return False
        if r.random() < 0.3:
            hi = str(rows - cut)
        j = self.fresh("j")
        jx = r.choice([j, j, f"{cols - 1} - {j}"])

        def row(i: str, c: int) -> str:
            return i if c == 0 else (f"{i} + {c}" if c > 0 else f"{i} - {-c}")

        def value(src: Arr, i: str, offs: List[int]) -> str:
            terms = [f"{src.name}[{row(i, c)}, {jx if n % 2 else j}]" for n, c in enumerate(offs)]
            s = " + ".join(terms)
            if kind(dt) == "f":
                return f"0.25 * ({s}) + 0.5"
            return f"{s} - {len(terms) - 1} * {src.name}[{row(i, offs[0])}, {j}]"

        nest_threads = [t for t in THREADS if t != 1]
        for dst, src, w, offs_k in ((q, p, w1, reads1), (p, q, w2, reads2)):
            i = self.fresh("i")
            self.nlabel += 1
            lab = f"L{self.nlabel}"
            self.spec[lab] = (r.choice(nest_threads), None, False)
            self.emit(ind, f"parpy.label('{lab}')")
            self.emit(ind, f"for {i} in range({lo}, {hi}):")
            v = value(src, i, offs_k)
            variant = self.pairs_r.choice(["plain", "plain", "private", "running", "branch"])
            if variant != "plain" and "row_pairs" not in self.avoid:
                self.features.add("row_pairs")
                zero = "0.0" if kind(dt) == "f" else "0"
                if variant == "private":
                    # a scalar of the row, read before the inner loop
                    s_ = self.fresh("s")
                    self.emit(ind + 1, f"{s_} = {src.name}[{row(i, offs_k[-1])}, {cols - 1}]")
                    v = f"{v} + {s_}"
                elif variant == "running":
                    # a running sum along the row, one per row
                    acc = self.fresh("acc")
                    self.emit(ind + 1, f"{acc} = {zero}")
                    self.emit(ind + 1, f"for {j} in range({cols}):")
                    self.emit(ind + 2, f"{acc} += {v}")
                    self.emit(ind + 2, f"{dst.name}[{row(i, w)}, {j}] = {acc}")
                    continue
                else:
                    # a term read only on some steps of the row
                    alt = f"{src.name}[{row(i, offs_k[0])}, {j}]"
                    v = f"({v} if {j} % 3 != 1 else {alt})"
            self.emit(ind + 1, f"for {j} in range({cols}):")
            self.emit(ind + 2, f"{dst.name}[{row(i, w)}, {j}] = {v}")
        return True

    def program(self) -> None:
        r = self.r
        for _ in range(r.randrange(1, 4)):
            nd = r.choice([1, 1, 2, 2, 3])
            self.new_array(None, [r.choice(self.sizes) for _ in range(nd)], "in")
        top = Scope(0, [], {}, 0, False, None)
        for unit in range(1, r.randrange(2, 5)):
            x = r.random()
            sc = top.child()
            sc.unit = unit
            if self.on("skew_loops", 0.12):
                if r.random() < 0.4:
                    t = self.fresh("t")
                    self.emit(1, f"for {t} in range({r.choice([2, 3])}):")
                    if not self.skew_pair(2):
                        self.emit(2, "pass")
                elif not self.skew_pair(1):
                    self.emit(1, "pass")
            elif x < 0.6:
                sc.nest = Nest()
                self.par_loop(sc, 1, sc.nest, 3)
            elif x < 0.8:
                sc.gpu = True
                self.emit(1, "with parpy.gpu:")
                self.block(sc, 2, 2, allow_par=False, first_store=True)
            else:
                v = self.fresh("k")
                self.emit(1, f"for {v} in range({r.choice([1, 2, 3])}):")
                sc.vars[v] = E(v, "wi", rng=(0, 2))
                if self.on("jumps", 0.3):
                    # host code: a condition on the counter only
                    self.emit(2, f"if {v} == {r.choice([0, 1])}:")
                    self.emit(3, r.choice(["break", "continue"]))
                sc.nest = Nest()
                self.par_loop(sc, 2, sc.nest, 3)

    def dict_pack(self, params: List[str]) -> Optional[Dict[str, Any]]:
        """With the `dict_args` feature, which parameters go into one dict
        argument `d` (last) and the keys that reach each: {"param": "d",
        "paths": {name: [key, ...]}}. Its own random stream: the program
        is the seed's either way."""
        r = random.Random(self.seed * 7907 + 3)
        if "dict_args" in self.avoid or r.random() >= 0.15:
            return None
        self.features.add("dict_args")
        chosen = r.sample(params, r.randint(1, min(4, len(params))))
        nested = r.random() < 0.4
        paths = {}
        for p in chosen:
            key = p if r.random() < 0.7 else f"key {p}"
            paths[p] = ["g", key] if nested and r.random() < 0.5 else [key]
        return {"param": "d", "paths": paths}

    def case(self) -> Dict[str, Any]:
        self.program()
        params = [a.name for a in self.arrays] + [s["name"] for s in self.scalars]
        body = self.lines
        pack = self.dict_pack(params)
        optional = [f"{o['name']}=None" for o in self.optionals]
        if pack is not None:
            paths = pack["paths"]
            pat = re.compile(r"\b(" + "|".join(map(re.escape, paths)) + r")\b")
            body = [pat.sub(lambda m: "d" + "".join(f"[{k!r}]" for k in paths[m.group(1)]), line)
                    for line in body]
            params = [p for p in params if p not in paths] + [pack["param"]]
        # (the first two lines are the imports a repro script leaves out)
        uses_math = re.search(r"(?<![\w.])math\.", "\n".join(body + self.helpers))
        src = ("import numpy as np\nimport parpy\n" + ("import math\n" if uses_math else "")
               + "\n\n" + "\n\n".join(self.helpers)
               + ("\n\n" if self.helpers else "")
               + f"@parpy.jit\ndef kern({', '.join(params + optional)}):\n"
               + "\n".join(body) + "\n")
        args = [{"name": a.name, "array": True, "dtype": a.dtype, "shape": a.shape,
                 "role": a.role} for a in self.arrays]
        args += [dict(s, array=False) for s in self.scalars]
        args += [dict(o) for o in self.optionals]
        # floats compare with the tolerance of the narrowest float type in
        # the program (a float16 value may end in a float64 array)
        used = set(a.dtype for a in self.arrays) | {s["kind"][3:] for s in self.scalars}
        used |= {t for t, short in (("float16", "F16"), ("float32", "F32")) if short in src}
        used |= self.math_floats
        used |= {o["dtype"] for o in self.optionals if o["array"] and not o["none"]}
        ftol = 2e-2 if "float16" in used else (1e-4 if "float32" in used else 1e-9)
        # the Cuda options (drawn last: the program of a seed is the same
        # as before they existed); other backends ignore them
        cuda = {"clusters": self.r.random() < 0.3, "graphs": self.r.random() < 0.3}
        self.features |= {f"cuda_{k}" for k, on in cuda.items() if on}
        return {"seed": self.seed, "source": src, "args": args, "ftol": ftol,
                "spec": {k: list(v) for k, v in self.spec.items()},
                "specialize": self.specialize, "vals_mode": self.vals_mode,
                "features": sorted(self.features), "cuda": cuda, "pack": pack}


def _short(dtype: str) -> str:
    return {"bool": "Bool", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
            "uint8": "U8", "uint16": "U16", "uint32": "U32", "uint64": "U64",
            "float16": "F16", "float32": "F32", "float64": "F64"}[dtype]


def generate(seed: int, avoid: Sequence[str] = (), float16: bool = True) -> Dict[str, Any]:
    """The case of `seed`: program text, arguments, parallel spec (a JSON-able
    dict). Deterministic: depends on the seed, `avoid` and `float16` only."""
    return Gen(seed, avoid, float16).case()


# --------------------------------------------------------------------------
# running a case (this block is copied into every repro script)


def build_args(case):
    """The arguments of a case: arrays from a generator seeded by the case's
    seed, scalars as recorded (Python or NumPy scalars)."""
    import numpy as np
    rng = np.random.default_rng(case["seed"] * 7919 + 17)
    out = []
    for a in case["args"]:
        if a.get("none"):
            out.append(None)  # (an optional parameter passed None)
            continue
        if not a["array"]:
            k, v = a["kind"], a["value"]
            if k in ("int", "float", "bool"):
                out.append({"int": int, "float": float, "bool": bool}[k](v))
            else:
                out.append(getattr(np, k.split(".")[1])(v))
            continue
        dt = np.dtype(a["dtype"])
        shape = tuple(a["shape"])
        if dt == np.bool_:
            x = rng.random(shape) < 0.5
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            lim = 20 if case["vals_mode"] == "small" else 1000
            x = rng.integers(max(int(info.min), -lim), min(int(info.max), lim),
                             size=shape, endpoint=True).astype(dt)
        else:
            scale = 4.0 if dt == np.float16 else (2.0 if case["vals_mode"] == "small" else 10.0)
            x = rng.uniform(-scale, scale, size=shape).astype(dt)
            m = rng.random(shape) < 0.2
            x[m] = np.round(x[m] * 2) / 2
        out.append(np.ascontiguousarray(x))
    return out


def call_args(case, args):
    """The arguments as `kern` takes them: those the case packs into one
    dict argument (nested dicts for longer key paths) leave their place
    and the dict comes last; the arrays in it are the same objects."""
    pack = case.get("pack") or {"paths": {}}
    out, d, opt = [], {}, []
    for spec, a in zip(case["args"], args):
        if "none" in spec:
            # an optional parameter (after the dict); a trailing None may
            # be left to the default
            opt.append((a, spec.get("omit", False)))
            continue
        path = pack["paths"].get(spec["name"])
        if path is None:
            out.append(a)
            continue
        node = d
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = a
    while opt and opt[-1][1]:
        opt.pop()
    return out + ([d] if case.get("pack") else []) + [a for a, _ in opt]


def compare(case, ref, got):
    """Per array argument: (name, same, detail). Integers and bools exactly;
    floats up to a relative and absolute tolerance by type (reductions may
    add in another order, C and CUDA may fuse multiply-adds), NaN equal to
    NaN, and a float16 infinity equal to a value beyond float16's range."""
    import numpy as np
    out = []
    for spec, r, g in zip(case["args"], ref, got):
        if not spec["array"] or r is None:
            continue
        if r.dtype.kind in "biu":
            ok = r == g
        else:
            tol = case.get("ftol", 1e-4)
            rr, gg = r.astype(np.float64), g.astype(np.float64)
            with np.errstate(all="ignore"):
                ok = np.isclose(rr, gg, rtol=tol, atol=tol, equal_nan=True)
            if r.dtype == np.float16:
                ok |= np.isinf(rr) & (np.abs(gg) > 6e4) | np.isinf(gg) & (np.abs(rr) > 6e4)
        same = bool(np.all(ok))
        detail = ""
        if not same:
            bad = tuple(int(i) for i in np.argwhere(~ok)[0])
            detail = (f"{int(np.sum(~ok))} of {ok.size} differ; at {bad}: expected {r[bad]!r}, "
                      f"got {g[bad]!r}")
        out.append((spec["name"], same, detail))
    return out


def expected_raise(e):
    """(class name, message) of an exception a generated check raises on
    purpose (`check_messages`: its message starts `chkN:`), else None."""
    import re
    msg = str(e)
    if isinstance(e, (AssertionError, ValueError)) and re.match(r"(`kern`: )?chk\d+:", msg):
        return type(e).__name__, msg
    return None


def same_raise(want, e):
    """Why the compiled call's exception `e` is not the undecorated
    function's `want` (class name, message): '' when it is (the same class,
    its text the same, named and located: "`kern`: TEXT (at ...")."""
    got = (type(e).__name__, str(e))
    if got[0] != want[0] or not got[1].startswith(f"`kern`: {want[1]} (at "):
        return f"Python raised {want[0]}: {want[1]!r}; compiled {got[0]}: {got[1]!r}"
    return ""


def make_opts(case, backend):
    import parpy
    spec = {}
    for label, (threads, tpb, reduction) in case["spec"].items():
        p = parpy.threads(threads)
        if tpb is not None:
            p = p.tpb(tpb)
        if reduction:
            p = p.par_reduction()
        spec[label] = p
    opts = parpy.par(spec)
    opts.backend = getattr(parpy.CompileBackend, backend)
    opts.specialize_scalars = case["specialize"]
    if backend == "Cuda":
        cuda = case.get("cuda", {})
        opts.use_cuda_thread_block_clusters = cuda.get("clusters", False)
        opts.use_cuda_graphs = cuda.get("graphs", False)
    return opts


# -- end of the block copied into repro scripts


def _load(case: Dict[str, Any], workdir: str) -> Any:
    path = os.path.join(workdir, f"case{case['seed']}.py")
    with open(path, "w") as f:
        f.write(case["source"])
    name = f"parpy_fuzz_case{case['seed']}_{os.getpid()}_{time.monotonic_ns()}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_ACCEPTED = {
    # documented limitations of a code-generation-only check
    "Cuda": ("float16", "`f16`", "host code"),
    "Metal": ("Metal", "float64", "8-bit", "16-bit"),
}


def _metal_stub() -> Optional[str]:
    d = os.path.dirname(os.path.abspath(__file__))
    for _ in range(4):
        d = os.path.dirname(d)
        p = os.path.join(d, "crates", "parpy-core", "tests", "metal_stub")
        if os.path.isdir(p):
            return p
    return None


def _codegen_checks(case: Dict[str, Any], kern: Any, args: List[Any], cache: str,
                    avoid: Sequence[str] = ()) -> List[Tuple[str, str]]:
    """Cuda through NVRTC and Metal through clang-19: [(kind, message)]."""
    import parpy
    from parpy import _cuda, _native
    fails = []
    for backend in ("Cuda", "Metal"):
        opts = make_opts(case, backend)
        opts.cache_dir = cache
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if backend == "Cuda":
                    if _cuda.nvrtc_path() is None:
                        parpy.print_compiled(kern, call_args(case, args), opts)
                    else:
                        try:
                            copies = [a.copy() if isinstance(a, np.ndarray) else a
                                      for a in args]
                            _native._cuda_dry_run(kern, call_args(case, copies), opts, 90)
                        except RuntimeError as e:
                            # an NVRTC that cannot compile (too old): the code only
                            if "NVRTC is not available" not in str(e):
                                raise
                            parpy.print_compiled(kern, call_args(case, args), opts)
                    continue
                code = parpy.print_compiled(kern, call_args(case, args), opts)
        except parpy.InternalError as e:
            fails.append((f"internal-{backend.lower()}", str(e)))
            continue
        except parpy.CompileError as e:
            msg = str(e)
            if not any(w in msg for w in _ACCEPTED[backend]):
                fails.append((f"refused-{backend.lower()}", msg))
            continue
        except Exception as e:  # noqa: BLE001
            fails.append((f"error-{backend.lower()}", f"{type(e).__name__}: {e}"))
            continue
        clang = shutil.which(os.environ.get("PARPY_CLANG", "clang-19"))
        stub = _metal_stub()
        if clang and stub:
            with tempfile.TemporaryDirectory() as d:
                src = os.path.join(d, "k.metal")
                with open(src, "w") as f:
                    f.write(code)
                p = subprocess.run(
                    [clang, "-x", "c++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra",
                     "-Wno-unknown-attributes", "-Werror",
                     "-Wno-tautological-compare",  # `x >= x` of the generated source
                     "-I", stub, "-include",
                     os.path.join(stub, "metal_stub.h"), src],
                    capture_output=True, text=True, timeout=120)
                if p.returncode != 0:
                    fails.append(("metal-clang", p.stderr[-2000:]))
    return fails


# what the CUDA emulator's refusals say (float16, thread block clusters):
# such a case is skipped, not failed
_EMU_LACKS = "the CUDA emulator has no "


def run_case(case: Dict[str, Any], backend: str, workdir: str, codegen: bool = True,
             avoid: Sequence[str] = ()) -> Dict[str, Any]:
    """Runs one case in this process: {"status": "ok" | kind, "message": ...}.
    Statuses: ok, invalid (the oracle itself failed: a generator bug),
    mismatch, refused (CompileError), internal, error, and codegen ones."""
    import parpy
    res: Dict[str, Any] = {"seed": case["seed"], "status": "ok", "message": "",
                           "features": case["features"]}
    mod = _load(case, workdir)
    kern = mod.kern
    args = build_args(case)
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    cache = os.path.join(workdir, "cache")
    want = None
    try:
        kern(*call_args(case, ref), opts=make_opts(case, "Python"))
    except Exception as e:  # noqa: BLE001
        want = expected_raise(e)
        if want is None:
            res.update(status="invalid", message=traceback.format_exc(limit=3))
            return res
        res["raised"] = want[0]
    emulated = backend == "CudaEmu"
    opts = make_opts(case, "Cuda" if emulated else backend)
    opts.cache_dir = cache
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if emulated:
                # the Cuda backend's own call path, the kernels emulated
                from . import _cuda_emu
                _cuda_emu.install(seed=case["seed"], workdir=os.path.join(workdir, "emu"))
            kern(*call_args(case, got), opts=opts)
    except parpy.InternalError as e:
        res.update(status="internal", message=str(e))
    except parpy.CompileError as e:
        res.update(status="refused", message=str(e))
    except Exception as e:  # noqa: BLE001
        if emulated and isinstance(e, RuntimeError) and _EMU_LACKS in str(e):
            res.update(status="skipped", message=str(e))
            return res
        if want is not None and expected_raise(e) is not None:
            bad = same_raise(want, e)
            if bad:
                res.update(status="raise-mismatch", message=bad)
        else:
            res.update(status="error", message=f"{type(e).__name__}: {e}")
    else:
        if want is not None:
            res.update(status="raise-mismatch",
                       message=f"no exception; Python raised {want[0]}: {want[1]}")
        else:
            bad = [f"{n}: {d}" for n, same, d in compare(case, ref, got) if not same]
            if bad:
                res.update(status="mismatch", message="\n".join(bad))
    if codegen and res["status"] == "ok":
        fails = _codegen_checks(case, kern, args, cache, avoid)
        if fails:
            res.update(status=fails[0][0], message=fails[0][1])
    return res


# --------------------------------------------------------------------------
# repro scripts


def repro_script(case: Dict[str, Any], res: Dict[str, Any], backend: str) -> str:
    import inspect
    block = "\n\n".join(inspect.getsource(f)
                        for f in (build_args, call_args, compare, expected_raise,
                                  same_raise, make_opts))
    head = "\n".join(
        [f"# parpy fuzz case {case['seed']}: {res['status']} on {backend}",
         f"# usage: python seed{case['seed']}.py [Cpu|Cuda]  (prints DIFFERENT for an array "
         "that disagrees with Python mode)",
         f"# features: {', '.join(case['features']) or '-'}"]
        + ["# " + line for line in res["message"].strip().splitlines()[:12]])
    src = case["source"].split("\n", 2)[2]  # without the two imports
    meta = {k: case[k] for k in ("seed", "args", "spec", "specialize", "vals_mode", "features",
                                 "ftol", "cuda", "pack") if k in case}
    return f'''{head}
import json
import sys
import warnings

import numpy as np
import parpy
{src}

CASE = json.loads(r"""{json.dumps(meta)}""")


{block}

if __name__ == "__main__":
    backend = sys.argv[1] if len(sys.argv) > 1 else {backend!r}
    args = build_args(CASE)
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = raised = None
    try:
        kern(*call_args(CASE, ref), opts=make_opts(CASE, "Python"))
    except (AssertionError, ValueError) as e:
        want = expected_raise(e)
        if want is None:
            raise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if backend == "CudaEmu":  # the Cuda backend, its kernels run on the CPU
            from parpy import _cuda_emu
            _cuda_emu.install(seed=CASE["seed"])
            backend = "Cuda"
        try:
            kern(*call_args(CASE, got), opts=make_opts(CASE, backend))
        except (AssertionError, ValueError) as e:
            if want is None:
                raise
            raised = e
    if want is not None:
        # (the arrays are not compared: Python stopped at the check)
        bad = same_raise(want, raised) if raised is not None else f"no exception: {{want}}"
        print("raise", "DIFFERENT " + bad if bad else "same")
    else:
        for name, same, detail in compare(CASE, ref, got):
            print(name, "same" if same else "DIFFERENT", detail)
'''


# --------------------------------------------------------------------------
# workers and the driver


def _worker(backend: str, workdir: str, codegen: bool, avoid: List[str], float16: bool
            ) -> None:
    """Reads seeds (one per line) on stdin, writes one JSON result per line."""
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever the programs print stays off the channel
    for line in sys.stdin:
        seed = int(line)
        try:
            case = generate(seed, avoid, float16)
            res = run_case(case, backend, workdir, codegen, avoid)
        except Exception:  # noqa: BLE001
            res = {"seed": seed, "status": "invalid", "message": traceback.format_exc(limit=4),
                   "features": []}
        out.write(json.dumps(res) + "\n")
        out.flush()


class Pool:
    """Worker processes that run cases; a worker that dies or hangs is
    replaced and the case reported as `crash` / `hang`."""

    def __init__(self, n: int, backend: str, workdir: str, codegen: bool,
                 avoid: Sequence[str], float16: bool, timeout: float) -> None:
        self.cmd = [sys.executable, "-m", "parpy._fuzz", "--worker", "--backend", backend,
                    "--workdir", workdir, "--avoid", ",".join(avoid)]
        if not codegen:
            self.cmd.append("--no-codegen")
        if not float16:
            self.cmd.append("--no-float16")
        self.n, self.timeout = n, timeout
        self.procs: List[Optional[subprocess.Popen]] = [None] * n

    def _proc(self, i: int) -> subprocess.Popen:
        p = self.procs[i]
        if p is None or p.poll() is not None:
            p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True, bufsize=1)
            self.procs[i] = p
        return p

    def run(self, i: int, seed: int) -> Dict[str, Any]:
        import select
        p = self._proc(i)
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(f"{seed}\n")
        p.stdin.flush()
        ready, _, _ = select.select([p.stdout], [], [], self.timeout)
        line = p.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        if p.poll() is None:
            p.kill()
            p.wait()
            self.procs[i] = None
            return {"seed": seed, "status": "hang", "message": f"no answer in {self.timeout}s",
                    "features": []}
        self.procs[i] = None
        return {"seed": seed, "status": "crash", "message": f"worker died ({p.returncode})",
                "features": []}

    def close(self) -> None:
        for p in self.procs:
            if p is not None and p.poll() is None:
                p.stdin.close()  # type: ignore[union-attr]
                p.wait(timeout=30)


def fuzz(seeds: Any, backend: str = "Cpu", out: Optional[str] = None, seconds: float = 0,
         codegen: bool = True, avoid: Sequence[str] = (), jobs: int = 1,
         timeout: float = 120, verbose: bool = False) -> Dict[str, Any]:
    """Runs the cases of `seeds` (an iterable) until it ends or `seconds`
    pass; writes a repro script per failure under `out`. Returns a summary:
    cases, seconds, failures [(seed, status, first line)], invalid, and
    features {feature: cases that have it}, raised (cases whose check
    failed on purpose, `check_messages`)."""
    import threading
    float16 = True  # every backend runs float16 (Cuda: __half)
    workdir = tempfile.mkdtemp(prefix="parpy-fuzz-")
    pool = Pool(jobs, backend, workdir, codegen, avoid, float16, timeout)
    start = time.monotonic()
    summary: Dict[str, Any] = {"cases": 0, "failures": [], "invalid": [], "skipped": 0,
                               "backend": backend, "features": {}, "raised": 0}
    it = iter(seeds)
    lock = threading.Lock()

    def next_seed() -> Optional[int]:
        with lock:
            if seconds and time.monotonic() - start > seconds:
                return None
            return next(it, None)

    def work(i: int) -> None:
        while True:
            seed = next_seed()
            if seed is None:
                return
            res = pool.run(i, seed)
            with lock:
                summary["cases"] += 1
                for f in res.get("features", []):
                    summary["features"][f] = summary["features"].get(f, 0) + 1
                summary["raised"] += bool(res.get("raised"))
                st = res["status"]
                if st == "invalid":
                    summary["invalid"].append((seed, res["message"].strip().splitlines()[-1:]))
                elif st == "skipped":
                    summary["skipped"] += 1
                elif st != "ok":
                    first = (res["message"].strip().splitlines() or [""])[0]
                    summary["failures"].append((seed, st, first[:200]))
                    if out:
                        os.makedirs(out, exist_ok=True)
                        case = generate(seed, avoid, float16)
                        with open(os.path.join(out, f"seed{seed}.py"), "w") as f:
                            f.write(repro_script(case, res, backend))
                if verbose and st not in ("ok", "skipped"):
                    print(f"seed {seed}: {st}: {res['message'].strip()[:300]}", flush=True)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pool.close()
    shutil.rmtree(workdir, ignore_errors=True)
    summary["seconds"] = time.monotonic() - start
    return summary


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m parpy._fuzz", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=0, help="stop after this many seconds")
    ap.add_argument("--cases", type=int, default=0, help="number of cases (default 100, or "
                    "unbounded with --seconds)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (seeds run consecutively)")
    ap.add_argument("--backend", default="cpu",
                    help="cpu (default), cuda, or cuda-emu (the Cuda code run on the CPU by "
                    "parpy._cuda_emu: kernels and launches, without a GPU)")
    ap.add_argument("--out", default="fuzz-failures", help="folder for the repro scripts")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per case before a hang")
    ap.add_argument("--no-codegen", action="store_true",
                    help="skip the Cuda (NVRTC) and Metal (clang-19) code checks")
    ap.add_argument("--avoid", default="", help="features not to generate, comma-separated: "
                    + ", ".join(FEATURES))
    ap.add_argument("--show", action="store_true", help="print the program of --seed and exit")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    ap.add_argument("--no-float16", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    backend = {"cpu": "Cpu", "cuda": "Cuda", "cuda-emu": "CudaEmu", "cudaemu": "CudaEmu"}.get(
        a.backend.lower())
    if backend is None:
        ap.error(f"--backend must be cpu, cuda or cuda-emu, not {a.backend!r}")
    avoid = [f for f in a.avoid.split(",") if f]
    unknown = [f for f in avoid if f not in FEATURES]
    if unknown:
        ap.error(f"unknown features in --avoid: {', '.join(unknown)}")
    if a.worker:
        _worker(backend, a.workdir, not a.no_codegen, avoid, not a.no_float16)
        return 0
    if a.show:
        case = generate(a.seed, avoid, backend not in ("Cuda", "CudaEmu"))
        print(case["source"])
        print(json.dumps({k: v for k, v in case.items() if k != "source"}, indent=1))
        return 0
    if backend == "Cuda":
        import parpy
        if not parpy.backend.is_enabled(parpy.CompileBackend.Cuda):
            print("parpy: " + parpy.backend.explain(parpy.CompileBackend.Cuda), file=sys.stderr)
            return 2
    n = a.cases or (0 if a.seconds else 100)
    seeds = range(a.seed, a.seed + n) if n else itertools.count(a.seed)
    s = fuzz(seeds, backend, a.out, a.seconds, not a.no_codegen, avoid, a.jobs, a.timeout,
             verbose=True)
    rate = s["cases"] / s["seconds"] if s["seconds"] else 0.0
    print(f"parpy fuzz: {s['cases']} cases on {backend} in {s['seconds']:.0f} s "
          f"({rate:.2f} cases/s), {len(s['failures'])} failures, "
          f"{len(s['invalid'])} invalid (generator) cases, {s['raised']} raising on purpose"
          + (f", {s['skipped']} skipped (what the emulator lacks)" if s["skipped"] else ""))
    print("  cases per feature: " + ", ".join(f"{f} {c}" for f, c in
                                              sorted(s["features"].items())))
    by: Dict[str, int] = {}
    for _, st, _ in s["failures"]:
        by[st] = by.get(st, 0) + 1
    for st, c in sorted(by.items()):
        print(f"  {st}: {c}")
    if s["failures"]:
        print(f"repro scripts in {a.out}/")
    return 1 if s["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

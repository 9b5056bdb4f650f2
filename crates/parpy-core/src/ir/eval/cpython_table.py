#!/usr/bin/env python3
"""Writes cpython_table.txt: what CPython computes for the scalar operations
of parpy's IR on a grid of values (negative operands, zeros, infinities,
NaN, the 64-bit integer extremes). `ir/eval/tests.rs` checks `ir::eval` in
Python mode against every line.

    python3 crates/parpy-core/src/ir/eval/cpython_table.py

Line format: `OP A B = R` (binary) or `OP A = R` (unary), each value `bN`
(bool), `iN` (int) or `fREPR` (the float, repr round-trips), R also `E:KIND` with
KIND one of ZeroDivision, Overflow (an int result beyond 64 bits, or
OverflowError), NegativePower (an int to a negative power, a float in
Python), NegativeShift, Unsupported (TypeError, a complex result).
"""
import math
import operator
import os

I64_MIN, I64_MAX = -2**63, 2**63 - 1

INTS = [0, 1, -1, 2, -3, 7, 63, 64, -2**31, 2**53 + 1, I64_MAX, I64_MIN, I64_MIN + 1]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1, -2.5, 9.0, 1e300, -1e300, 5e-324, math.inf, -math.inf,
          math.nan]
BOOLS = [False, True]

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<<": operator.lshift,
    ">>": operator.rshift, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "max": max, "min": min,
}
UNARY = {"-": operator.neg, "~": operator.invert, "not": operator.not_}


def tok(v):
    if isinstance(v, bool):
        return f"b{int(v)}"
    if isinstance(v, int):
        return f"i{v}"
    return "f" + repr(v)


def result(f, *args):
    a = args[0]
    b = args[1] if len(args) > 1 else None
    ints = all(isinstance(x, int) for x in args)
    # guard the computations CPython would spend unbounded time or memory on
    if f is operator.pow and ints and abs(a) > 1 and b > 64:
        return "E:Overflow"
    if f is operator.lshift and ints and a != 0 and b > 64:
        return "E:Overflow"
    # a negative float to a fractional power is complex (CPython may then
    # raise OverflowError computing it)
    if f is operator.pow and not ints and math.isfinite(a) and a < 0 and math.isfinite(b) \
            and b != math.floor(b):
        return "E:Unsupported"
    try:
        r = f(*args)
    except ZeroDivisionError:
        return "E:ZeroDivision"
    except OverflowError:
        return "E:Overflow"
    except ValueError:
        return "E:NegativeShift"
    except TypeError:
        return "E:Unsupported"
    if isinstance(r, complex):
        return "E:Unsupported"
    if f is operator.pow and ints and isinstance(r, float):
        return "E:NegativePower"
    if isinstance(r, int) and not isinstance(r, bool) and not I64_MIN <= r <= I64_MAX:
        return "E:Overflow"
    return tok(r)


def kind(x):
    return type(x).__name__


def exact(x):
    """An int that converts to float without rounding."""
    return isinstance(x, bool) or not isinstance(x, int) or abs(x) <= 2**53


def main():
    pairs = [(a, b) for a in INTS for b in INTS] + [(a, b) for a in FLOATS for b in FLOATS]
    pairs += [(a, b) for a in BOOLS for b in BOOLS]
    pairs += [(a, b) for a in BOOLS for b in INTS[:6]] + [(a, b) for a in INTS[:6] for b in BOOLS]
    small = [x for x in INTS if exact(x)][:6]
    pairs += [(a, b) for a in small for b in FLOATS] + [(a, b) for a in FLOATS for b in small]
    lines = []
    for name, f in BINARY.items():
        for a, b in pairs:
            # int / int is exact in Python; the evaluator divides floats
            if name == "/" and not (exact(a) and exact(b)):
                continue
            # Python's max and min return one of the operands as it is; the
            # IR applies them to operands of one type
            if name in ("max", "min") and kind(a) != kind(b):
                continue
            # bitwise operators refuse floats: a few lines say so
            floats = isinstance(a, float) or isinstance(b, float)
            if floats and name in ("<<", ">>", "&", "|", "^") and (a, b) != (1.0, 1.0):
                continue
            lines.append(f"{name} {tok(a)} {tok(b)} = {result(f, a, b)}")
    for name, f in UNARY.items():
        for a in INTS + FLOATS + BOOLS:
            lines.append(f"{name} {tok(a)} = {result(f, a)}")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpython_table.txt")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

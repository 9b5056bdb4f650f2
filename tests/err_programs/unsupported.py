# Constructs outside the supported subset; each function has one.
import parpy


def list_comprehension(x, N):
    ys = [x[j] for j in range(N)]
    for i in range(N):
        x[i] = 0.0


def try_statement(x, N):
    for i in range(N):
        try:
            x[i] = 1.0
        except Exception:
            x[i] = 0.0


def import_statement(x, N):
    import math
    for i in range(N):
        x[i] = 1.0


def keyword_argument(x, N):
    for i in range(N):
        x[i] = parpy.math.sqrt(x=x[i])

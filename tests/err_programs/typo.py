# The tutorial's typo: the parameter is `y`, the body writes `out`.
import parpy


def sum_rows_typo(x, y, N):
    parpy.label('N')
    for i in range(N):
        out[i] = parpy.operators.sum(x[i, :])  # noqa: F821

# The "Inconsistent parallel structure" tutorial.
import parpy


def normalize_rows(x, N):
    parpy.label('N')
    for i in range(N):
        parpy.label('M1')
        s = parpy.operators.sum(x[i, :])
        parpy.label('M2')
        x[i, :] = x[i, :] / s

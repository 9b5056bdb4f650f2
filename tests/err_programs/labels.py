# A program with one label; the tests ask for another one too.
import parpy


def copy(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = x[i]

# Races in parallel loops that the compiler refuses (tests/test_races.py).
import parpy


def histogram(x, hist, N):
    parpy.label('N')
    for i in range(N):
        b = x[i]
        hist[b] += 1


def last_value(x, s, N):
    parpy.label('N')
    for i in range(N):
        s[0] = x[i]


def total(x, s, N):
    parpy.label('N')
    for i in range(N):
        s[0] += x[i]


def naive_scan(x, N):
    parpy.label('N')
    for i in range(1, N):
        x[i] = x[i - 1] + x[i]


def in_place_stencil(x, N):
    parpy.label('N')
    for i in range(1, N - 1):
        x[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0


def pairs(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i // 2] = y[i // 2] + x[i]


def shared_scalar(x, y, N):
    t = 0.0
    parpy.label('N')
    for i in range(N):
        t = t + x[i]
        y[i] = t


def column_sums(x, y, N, M):
    parpy.label('N')
    for i in range(N):
        for j in range(M):
            y[j] += x[i, j]


def inner_scan(x, N, M):
    parpy.label('N')
    for i in range(N):
        parpy.label('M')
        for j in range(1, M):
            x[i, j] = x[i, j - 1] * 0.5


def histogram_peek(x, hist, seen, N):
    parpy.label('N')
    for i in range(N):
        parpy.atomic.add(hist, x[i], 1)
        seen[i] = hist[x[i]]


def counter_reset(x, count, N):
    parpy.label('N')
    for i in range(N):
        parpy.atomic.add(count, 0, x[i])
        if x[i] > 100:
            count[0] = 0


def own_element_atomics(x, y, z, N):
    parpy.label('N')
    for i in range(N):
        parpy.atomic.add(y, i, x[i])
        z[i] = y[i]


def histogram_then_read(x, hist, seen, N):
    parpy.label('N')
    for i in range(N):
        parpy.atomic.add(hist, x[i], 1)
    parpy.label('N')
    for i in range(N):
        seen[i] = hist[x[i]]


def reused_name(x, y, z, N):
    parpy.label('N')
    for i in range(N):
        m = x[i] * 2.0
        y[i] = m
    m = x[0]
    z[0] = m


def reused_name_in_a_time_loop(x, y, z, T, N):
    for t in range(T):
        parpy.label('N')
        for i in range(N):
            if i > 0:
                m = x[i] + t
                y[i] = m
    m = parpy.operators.max(y[:])
    z[0] = m


def value_read_after(x, y, z, N):
    parpy.label('N')
    for i in range(N):
        m = x[i] * 2.0
        y[i] = m
    z[0] = m


def assigned_on_one_branch(x, y, N):
    m = 0.0
    parpy.label('N')
    for i in range(N):
        if x[i] > 0:
            m = x[i]
        y[i] = m


def fold(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i % 4] = x[i]


def halves(x, y, N):
    parpy.label('N')
    for i in range(N):
        b = i // 2
        y[b] = x[i]


def strided_and_unit(y, N):
    parpy.label('N')
    for i in range(N):
        y[2 * i] = 1.0
        y[i] = 2.0


def mirrored(y, N):
    parpy.label('N')
    for i in range(N):
        y[N - 1 - i] = 1.0
        y[i] = 2.0


def reads_the_first(y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = y[0] + 1.0


def gathers_every_other(y, N):
    parpy.label('N')
    for i in range(1, N):
        y[i] = y[2 * i - 1] * 0.5


def transpose_in_place(u, N):
    parpy.label('N')
    for i in range(N):
        for j in range(N):
            u[i, j] = u[j, i]


def subtract_the_first_row(A, N):
    parpy.label('N')
    for i in range(N):
        A[i, :] = A[i, :] - A[0, :]


def sum_of_what_others_write(y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.sum(y[:])

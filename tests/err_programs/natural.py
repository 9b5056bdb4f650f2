# Natural-Python mistakes (issue 13): each error names the parpy way.
import numpy as np

import parpy


def allocates(x, y, N):
    for i in range(N):
        y[i] = np.tile(x[i, :], 3)
        y[i] = x[i, 0]


def unpack_count(x, y, N):
    a, b = x[0, 0], x[1, 0], x[2, 0]
    y[0] = a + b


def unpack_scalar(x, y, N):
    a, b = x[3, 0]
    y[0] = a + b


def bad_method(x, y, N):
    for i in range(N):
        y[i] = x[i, :].ptp()


def no_equivalent(x, y, N):
    for i in range(N):
        y[i] = np.kron(x[i, :], x[i, :])


def enumerate_one_name(x, y, N):
    for p in enumerate(x[0, :]):
        y[0] = 1.0


def zip_too_few_names(x, y, N):
    for a, b in zip(x[0, :], x[1, :], x[2, :]):
        y[0] = a + b


def tuple_over_range(x, y, N):
    for a, b in range(N):
        y[0] = a + b


def enumerate_2d(x, y, N):
    for i, row in enumerate(x * 2.0):
        y[i] = row[0]


def enumerate_runtime_start(x, y, N):
    start = int(x[0, 0])
    for i, v in enumerate(x[0, :], start):
        y[0] = v


def zip_outside_loop(x, y, N):
    z = zip(x[0, :], x[1, :])
    y[0] = 1.0


@parpy.jit
def scaled(a, s=2.0, shift=0.5):
    return a * s + shift


def keyword_typo(x, y, N):
    for i in range(N):
        y[i] = np.round(x[i, 0], decimal=2)


def keyword_twice(x, y, N):
    for i in range(N):
        y[i] = scaled(x[i, 0], a=1.0)


def axis_out_of_bounds(x, y, N):
    for i in range(N):
        y[i] = x[i, :].sum(axis=1)


def ufunc_operand_by_name(x, y, N):
    for i in range(N):
        y[i] = np.sqrt(x=x[i, 0])


def none_as_value(x, y, N):
    for i in range(N):
        y[i] = scaled(None)


def rebound_other_shape(x, y, N):
    for i in range(N):
        e = x[i, :] * 2.0
        if i > 100:
            e = x[i, 1:] * 2.0
        y[i] = e.sum()


def array_rebound_to_number(x, y, N):
    for i in range(N):
        d = x[i, :] - 1.0
        if i > 100:
            d = y[i] * 1.0
        y[i] = d[0]


def view_of_rebound(x, y, N):
    for i in range(N):
        e = x[i, :] + 1.0
        h = e[1:]
        if i > 100:
            e = x[i, :] - 3.0
        y[i] = h.sum()
        y[i] += e.sum()


def tuple_of_names(x, y, N):
    for i in range(N):
        for w in (0.5, N + 0):
            y[i] += w * x[i, 0]


def tuple_ragged(x, y, N):
    for i in range(1, N - 1):
        for d, w in ((-1, 0.5), (1, 0.5, 2.0)):
            y[i] += w * x[i + d, 0]


@parpy.jit
def pair(a):
    return a, a + 1.0


def pair_as_one_value(x, y, N):
    for i in range(N):
        y[i] = pair(x[i, 0])


def pair_into_three(x, y, N):
    for i in range(N):
        a, b, c = pair(x[i, 1])
        y[i] = a + b + c


def assert_message_of_an_array(x, y, N):
    for i in range(N):
        assert x[i, 0] > 0.0, f"row {x[i, :]} starts below zero"
        y[i] = x[i, 0]


def axis_left_in_an_element(x, y, N):
    for i in range(N):
        y[i] = np.max(x[1:3, :], axis=0)


def matmul_of_an_expression(x, y, N):
    for i in range(N):
        y[i] = np.sum(np.max(x, axis=0, keepdims=True) @ x.T)


def newaxis_as_a_value(x, y, N):
    a = np.newaxis
    y[0] = x[0, 0]



def two_ellipses(x, y, N):
    y[0] = x[..., ...]


def fill_as_a_value(x, y, N):
    for i in range(N):
        y[i] = x[i, :].fill(0.0)


def outer_of_a_matrix(x, y, N):
    for i in range(N):
        y[i] = np.sum(np.outer(x * 2.0, x[i, :]))


def attribute_of_an_element(x, y, N):
    for i in range(N):
        y[i] = x[i, 0].real


def print_in_a_kernel(x, y, N):
    for i in range(N):
        print(i, x[i, 0])
        y[i] = x[i, 0]


def matmul_of_a_number(x, y, N):
    for i in range(N):
        y[i] = np.sum(x[i, :] @ 2.0)


def flip_of_a_run_time_slice(x, y, N):
    for i in range(N):
        x[i, :i] = np.flip(x[i, i:2 * i])


def run_time_slice_with_a_row(x, y, N):
    for i in range(N):
        y[i] = np.sum(x[i, :i] * x[0])


def no_equivalent_with_keyword(x, y, N):
    # (was an error about the keyword, not about the function)
    for i in range(N):
        y[i] = np.unique(x[i, :], return_counts=True)[1][0]


def histogram_of_edges(x, y, N):
    for i in range(N):
        y[i] = np.histogram(x[i, :], x[0, :])[0][0]


def histogram_weights(x, y, N):
    for i in range(N):
        c, e = np.histogram(x[i, :], 4, weights=x[i, :4])
        y[i] = c[0]


def pad_mode_unsupported(x, y, N):
    for i in range(N):
        y[i] = np.sum(np.pad(x[i, :], 2, mode='linear_ramp'))


def pad_negative_width(x, y, N):
    for i in range(N):
        y[i] = np.sum(np.pad(x[i, :], (1, -2)))


def pad_run_time_width(x, y, N):
    for i in range(N):
        y[i] = np.sum(np.pad(x[i, :], i))


def print_of_an_f_string(x, y, N):
    # (was "f-strings are not supported", at decoration)
    for i in range(N):
        print(f"row {i}: {x[i, 0]:.3f}")
        y[i] = x[i, 0]

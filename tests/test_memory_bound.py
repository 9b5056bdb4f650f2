"""The in-memory cache is bounded (issue 10 item 14): past
`parpy.set_max_loaded(n)` the least recently used specialization is dropped
and its shared library unmapped; `clear_cache()` unmaps them all at once
(a call in flight keeps its own until it returns); decorating a function
again and again does not grow memory."""

import gc
import os
import sys
import threading

import numpy as np
import pytest

import parpy

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")


def mapped_libraries(cache_dir):
    """The libraries of `cache_dir` mapped now (each is loaded from a
    private copy beside the entry, removed once mapped: `(deleted)`)."""
    with open("/proc/self/maps") as f:
        return {line.split()[5] for line in f
                if str(cache_dir) in line and ".so" in line.split()[5]}


@parpy.jit
def add_one(x):
    parpy.label('i')
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0


@parpy.jit
def spin(x, y, N, R):
    parpy.label('i')
    for i in range(N):
        s = 0.0
        for r in range(R):
            s = s + x[i] * 0.5
        y[i] = s


def opts_in(d, **fields):
    o = parpy.par({'i': parpy.threads(4)})
    o.cache_dir = str(d)
    for k, v in fields.items():
        setattr(o, k, v)
    return o


@pytest.fixture
def bound():
    prev = parpy.set_max_loaded(6)
    yield 6
    parpy.set_max_loaded(prev)


@linux
def test_loaded_specializations_stay_within_the_bound(tmp_path, bound):
    parpy.clear_cache()
    opts = opts_in(tmp_path)
    for n in range(1, 25):  # one library per shape
        x = np.zeros(n)
        add_one(x, opts=opts)
        assert (x == 1).all()
        assert parpy._native._loaded_specializations() <= bound
        assert len(mapped_libraries(tmp_path)) <= bound
    assert len(list(tmp_path.glob("*.so"))) >= 24
    # the first ones were dropped; calling them loads them again
    x = np.zeros(1)
    add_one(x, opts=opts)
    assert x[0] == 1
    assert add_one.specializations()[-1]["origin"] == "disk"


@linux
def test_clear_cache_unmaps_every_library(tmp_path, bound):
    parpy.clear_cache()  # (nothing of earlier tests in memory)
    opts = opts_in(tmp_path)
    for n in (3, 4, 5):
        add_one(np.zeros(n), opts=opts)
    assert len(mapped_libraries(tmp_path)) == 3
    parpy.clear_cache()
    assert parpy._native._loaded_specializations() == 0
    assert mapped_libraries(tmp_path) == set()
    x = np.zeros(3)
    add_one(x, opts=opts)
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_a_call_in_flight_keeps_its_library(tmp_path):
    # clear_cache and eviction from other threads while a long call runs
    opts = opts_in(tmp_path, specialize_scalars=False)
    n, r = 4096, 20000
    x = np.ones(n)
    errors = []

    def run():
        try:
            for _ in range(3):
                y = np.zeros(n)
                spin(x, y, n, r, opts=opts)
                assert np.allclose(y, 0.5 * r)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    prev = parpy.set_max_loaded(1)
    try:
        while t.is_alive():
            parpy.clear_cache()
            add_one(np.zeros(2), opts=opts_in(tmp_path))
    finally:
        parpy.set_max_loaded(prev)
        t.join()
    assert not errors, errors


@linux
def test_decorating_again_does_not_grow_memory():
    def make():
        def f(x, N):
            for i in range(N):
                x[i] = 1.0
        return parpy.jit(f)

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    for _ in range(2000):
        make()
    gc.collect()
    before = rss()
    for _ in range(20000):
        make()
    gc.collect()
    # (each decoration kept ~250 bytes before: 5 MB here)
    assert rss() - before < 1_500_000, (rss() - before) / 20000

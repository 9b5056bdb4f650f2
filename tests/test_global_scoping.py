"""Module globals as Python reads them: at each call, through plain
(undecorated) helpers too, however deep; and never where the function
assigns the name (Python makes it a local of the whole function). Checked
against the plain-Python run."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts

K = 1.0
G = 1.0


# --- a global read through plain helpers is read again when re-bound ---

def plain_scaled(v):
    return v * K


@parpy.jit
def through_plain(x, N):
    for i in range(N):
        x[i] = plain_scaled(x[i])


def plain_inner(v):
    return v * 2.0


def plain_outer(v):
    return plain_inner(v)


@parpy.jit
def through_two_plain(x, N):
    for i in range(N):
        x[i] = plain_outer(x[i])


def plain_leaf(v):
    return v * K


@parpy.jit
def jit_middle(v):
    return plain_leaf(v)


@parpy.jit
def through_jit_then_plain(x, N):
    for i in range(N):
        x[i] = jit_middle(x[i])


def _ones_after(fn):
    x = np.ones(2)
    fn(x, 2, opts=cpu_opts())
    return list(x)


@pytest.mark.parametrize("fn", [through_plain, through_jit_then_plain])
def test_a_global_a_plain_helper_reads_re_bound_is_read_again(fn):
    global K
    try:
        K = 1.0
        assert _ones_after(fn) == [1.0, 1.0]
        K = 3.0
        assert _ones_after(fn) == [3.0, 3.0]
        K = 1.0
        assert _ones_after(fn) == [1.0, 1.0]
    finally:
        K = 1.0


def test_a_plain_helper_a_plain_helper_calls_redefined_is_read_again():
    global plain_inner
    saved = plain_inner
    try:
        assert _ones_after(through_two_plain) == [2.0, 2.0]

        def plain_inner(v):
            return v * 50.0
        assert _ones_after(through_two_plain) == [50.0, 50.0]
    finally:
        plain_inner = saved


# --- a name the function assigns is its local, never the global ---

@parpy.jit
def local_after_read_in_for(x, N):
    for i in range(N):
        if i > 0:
            x[i] = G
        G = 5.0


@parpy.jit
def local_after_read_in_while(x, N):
    i = 0
    while i < N:
        if i > 0:
            x[i] = G
        G = 5.0 + i
        i += 1


@parpy.jit
def helper_with_local(v, N):
    s = 0.0
    for i in range(N):
        if i > 0:
            s += G
        G = v
    return s


@parpy.jit
def calls_helper_with_local(x, N):
    for i in range(N):
        x[i] = helper_with_local(x[i], 3)


@pytest.mark.parametrize("fn, expected", [
    (local_after_read_in_for, [0.0, 5.0, 5.0, 5.0]),
    (local_after_read_in_while, [0.0, 5.0, 6.0, 7.0]),
    # (the helper's `s` adds its local `G`, `v`, twice)
    (calls_helper_with_local, [0.0, 2.0, 4.0, 6.0]),
])
def test_a_local_named_as_a_global_is_read_as_the_local(fn, expected):
    if fn is not calls_helper_with_local:
        ref = np.arange(4.0)
        fn.py_func(ref, 4)
        assert list(ref) == expected
    x = np.arange(4.0)
    fn(x, 4, opts=cpu_opts())
    assert list(x) == expected
    assert G == 1.0


@parpy.jit
def assigned_from_itself(x, N):
    G = G + 1.0
    x[0] = G


def helper_assigned_from_itself(v):
    G = G + v
    return G


@parpy.jit
def calls_helper_assigned_from_itself(x, N):
    x[0] = helper_assigned_from_itself(x[0])


@pytest.mark.parametrize("fn", [assigned_from_itself, calls_helper_assigned_from_itself])
def test_a_local_read_before_any_assignment_is_unbound_not_the_global(fn):
    with pytest.raises(UnboundLocalError):
        fn.py_func(np.zeros(3), 3)
    with pytest.raises(parpy.CompileNameError) as e:
        fn(np.zeros(3), 3, opts=cpu_opts())
    msg = str(e.value)
    assert "local variable `G` is read before it is assigned" in msg
    assert "G = G + " in msg
    assert "the module-level `G` is not read" in msg
    assert isinstance(e.value, NameError)


@parpy.jit
def read_first_in_loop(x, N):
    for i in range(N):
        x[i] = G
        G = 5.0


@parpy.jit
def read_first_in_while(x, N):
    i = 0
    while i < N:
        x[i] = G
        G = 5.0
        i += 1


@pytest.mark.parametrize("fn", [read_first_in_loop, read_first_in_while])
def test_a_local_read_first_in_a_loop_raises_unbound_local_error(fn):
    with pytest.raises(UnboundLocalError):
        fn.py_func(np.zeros(3), 3)
    x = np.zeros(3)
    with pytest.raises(UnboundLocalError):
        fn(x, 3, opts=cpu_opts())


# --- a module-level lambda called as a helper ---

SQ = lambda v: v * v  # noqa: E731


@parpy.jit
def calls_module_lambda(x, N):
    for i in range(N):
        x[i] = SQ(x[i])


def test_a_module_level_lambda_says_to_define_it_with_def():
    with pytest.raises(parpy.CompileError) as e:
        calls_module_lambda(np.arange(3.0), 3, opts=cpu_opts())
    msg = str(e.value)
    assert "cannot call `SQ` (a lambda, which parpy cannot compile as a helper: " \
        "define it with `def`" in msg
    assert "x[i] = SQ(x[i])" in msg
    # (no nested message from compiling the line the lambda is on)
    assert msg.count("error:") == 1 and "no `def` found" not in msg


# --- an exception raised while a global is looked up is not "no such name" ---

class LazyNamespace:
    """A namespace whose attributes load on first use (as a lazy module's
    `__getattr__` does); `broken` fails to load."""

    def __getattr__(self, name):
        if name == "scale":
            return 3.0
        if name == "broken":
            raise ImportError("the lazy module 'heavy' is not installed")
        raise AttributeError(name)


LAZY = LazyNamespace()


@parpy.jit
def reads_lazy_scale(x, N):
    for i in range(N):
        x[i] = x[i] * LAZY.scale


@parpy.jit
def reads_lazy_broken(x, N):
    for i in range(N):
        x[i] = x[i] * LAZY.broken


def test_an_attribute_a_lazy_namespace_loads_is_read():
    x = np.ones(4)
    reads_lazy_scale(x, 4, opts=cpu_opts())
    assert (x == 3.0).all()


def test_an_attribute_that_fails_to_load_says_why():
    # (it used to read as an attribute the object lacks, its ImportError
    # dropped)
    with pytest.raises(parpy.CompileError) as e:
        reads_lazy_broken(np.ones(4), 4, opts=cpu_opts())
    assert "ImportError" in str(e.value) and "'heavy' is not installed" in str(e.value), str(e.value)


CTRL_C_IN_GETATTR = '''\
import os, signal, sys
import numpy as np, parpy

class Lazy:
    def __getattr__(self, name):
        if name != "scale":
            raise AttributeError(name)
        # Ctrl-C while a lazy module loads: the handler raises
        # KeyboardInterrupt inside this method, in the compile
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10 ** 7):
            pass
        return 2.0

LAZY = Lazy()

@parpy.jit
def f(x, N):
    for i in range(N):
        x[i] = x[i] * LAZY.scale

o = parpy.CompileOptions()
o.backend = parpy.CompileBackend.Cpu
o.cache_dir = sys.argv[1]
x = np.ones(3)
try:
    f(x, 3, opts=o)
    print("returned", x[0])
except KeyboardInterrupt:
    print("KeyboardInterrupt")
except BaseException as e:
    print("other", type(e).__name__)
'''


def test_ctrl_c_while_a_global_loads_raises_keyboard_interrupt(tmp_path):
    # (it was swallowed: the lookup read the interrupt as a missing
    # attribute, asked again, and the call ran to its end)
    import subprocess
    import sys
    script = tmp_path / "ctrl_c_in_getattr.py"
    script.write_text(CTRL_C_IN_GETATTR)
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "cache")],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.split()[:1] == ["KeyboardInterrupt"], (r.stdout, r.stderr[-2000:])

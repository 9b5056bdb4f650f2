"""Printing generated code, editing it, and running the edited version.

The "Printing generated code" tutorial as a script:

1. print the C code that parpy generates for `sum_rows`;
2. edit it (by default non-interactively: the OpenMP schedule of the loops is
   changed from static to dynamic and a marked comment is added, which keeps
   the meaning; `--edit-with FILE` uses the contents of FILE instead,
   `--editor` opens $EDITOR on the code);
3. compile the edited text with `parpy.compile_string` and run it;
4. show the error parpy reports for a typo: the body writes `out[i] = ...`
   while the parameter is called `y`.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

import parpy


def sum_rows(x, y, N):
    parpy.label('N')
    for i in range(N):
        y[i] = parpy.operators.sum(x[i, :])


def sum_rows_typo(x, y, N):
    parpy.label('N')
    for i in range(N):
        out[i] = parpy.operators.sum(x[i, :])  # noqa: F821 (the typo is the point)


EDIT_MARK = "/* edited by examples/print_and_edit.py */"


def edit_programmatically(code):
    """A semantics-preserving edit, as a user tuning the code might make:
    dynamic instead of static OpenMP scheduling, plus a comment at the end.
    The `parpy-signature` header lines are left untouched."""
    edited = code.replace("schedule(static)", "schedule(dynamic, 4)")
    return edited.rstrip("\n") + "\n" + EDIT_MARK + "\n"


def edit_with_editor(code):
    editor = os.environ.get("EDITOR", "vi")
    with tempfile.NamedTemporaryFile("w+", suffix=".c", delete=False) as f:
        f.write(code)
        path = f.name
    try:
        subprocess.run([editor, path], check=True)
        with open(path) as f:
            return f.read()
    finally:
        os.unlink(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--edit-with", metavar="FILE",
                   help="compile the contents of FILE instead of the printed code")
    g.add_argument("--editor", action="store_true",
                   help="open $EDITOR on the printed code (interactive)")
    args = ap.parse_args(argv)

    N, M = 64, 300
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, M)).astype(np.float32)
    y = np.zeros((N,), dtype=np.float32)
    opts = parpy.par({'N': parpy.threads(N)})
    opts.backend = parpy.CompileBackend.Cpu

    # 1. print_compiled works on undecorated functions too.
    code = parpy.print_compiled(sum_rows, [x, y, N], opts)
    print("---- generated code ----")
    print(code)

    # 2. edit
    if args.edit_with:
        with open(args.edit_with) as f:
            edited = f.read()
    elif args.editor:
        edited = edit_with_editor(code)
    else:
        edited = edit_programmatically(code)
    print("---- edited code (last lines) ----")
    if not (args.edit_with or args.editor):
        print(f"edit: {code.count('schedule(static)')} OpenMP schedule(s) changed to dynamic")
    print("\n".join(edited.rstrip("\n").splitlines()[-3:]))

    # 3. compile the edited text and run it (no opts in the call)
    fn = parpy.compile_string("sum_rows", edited, opts)
    fn(x, y, N)
    assert np.allclose(y, x.sum(axis=1), atol=1e-3), "edited code gives a wrong result"
    print("edited code ran; result matches NumPy")

    # 4. the typo: `out` is not defined
    print("---- the typo case ----")
    try:
        parpy.print_compiled(sum_rows_typo, [x, y, N], opts)
    except parpy.CompileError as e:
        print(e)
    else:
        print("expected a CompileError for the undefined name `out`")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

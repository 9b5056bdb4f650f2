"""Read-only copies of the container fields of `CompileOptions`.

`opts.parallelize` (a mapping) and `opts.includes`, `opts.libs`,
`opts.extra_flags` (lists) read as a copy of the options' value, so a change
made in place (`opts.includes.append(d)`, `opts.parallelize['i'] = p`) would
never reach the options. The copies refuse such changes with a TypeError
that names the assignment to write instead; `+=` (lists) and `|=` (the
mapping) give a new value that Python then assigns to the field, so
`opts.includes += [d]` and `opts.parallelize |= {'i': p}` work. Copies of a
copy (`list(v)`, `dict(v)`, `copy.copy`, pickling) are plain lists and
dicts. `crates/parpy-py/src/options.rs` (`OptData::get`) makes them with
`read_only`.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, NoReturn


class _ReadOnly:
    """The one refusal shared by both kinds of copies."""

    __slots__ = ()
    _field: str
    _fix: str

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"CompileOptions.{self._field} reads as a copy: changing it in place would not "
            f"change the options; assign the field instead: {self._fix}")


class OptionList(_ReadOnly, list):  # type: ignore[misc]
    __slots__ = ("_field", "_fix")

    def __init__(self, field: str, items: Iterable[str]) -> None:
        list.__init__(self, items)
        self._field = field
        self._fix = f"opts.{field} += [...] or opts.{field} = [...]"

    append = extend = insert = pop = remove = clear = sort = reverse = _ReadOnly._refuse
    __setitem__ = __delitem__ = _ReadOnly._refuse

    def __iadd__(self, other: Iterable[str]) -> List[str]:  # type: ignore[override,misc]
        # a new list, which `opts.FIELD += [...]` assigns to the field
        return [*self, *other]

    def __imul__(self, n: int) -> List[str]:  # type: ignore[override,misc]
        return list(self) * n

    def __reduce__(self) -> Any:
        return list, (list(self),)


class OptionMapping(_ReadOnly, dict):  # type: ignore[misc]
    __slots__ = ("_field", "_fix")

    def __init__(self, field: str, items: Dict[str, Any]) -> None:
        dict.__init__(self, items)
        self._field = field
        self._fix = (f"opts.{field} |= {{'label': parpy.threads(n)}} or "
                     f"opts.{field} = {{...}}")

    pop = popitem = clear = update = setdefault = _ReadOnly._refuse
    __setitem__ = __delitem__ = _ReadOnly._refuse

    def __ior__(self, other: Any) -> Dict[str, Any]:  # type: ignore[override,misc]
        # a new dict, which `opts.FIELD |= {...}` assigns to the field
        d = dict(self)
        d.update(other)
        return d

    def __reduce__(self) -> Any:
        return dict, (dict(self),)


def read_only(field: str, value: Any) -> Any:
    """The copy of a container field that `opts.FIELD` returns."""
    if isinstance(value, dict):
        return OptionMapping(field, value)
    return OptionList(field, value)

"""`value_type`: memstrata's value classes, built without `dataclasses` at import.

`@value_type(frozen=True)` gives a class what `@dataclass(frozen=True)` gave it, and
mypy checks it as one (`typing.dataclass_transform`): `__init__` (positional or by
keyword, defaults, `field(default_factory=...)`, `__post_init__`), `__repr__`,
`__eq__` over the compared fields, `__hash__` when frozen (unhashable otherwise), the
frozen `__setattr__`/`__delattr__` raising `dataclasses.FrozenInstanceError`, and
`__match_args__`. `dataclasses.fields`, `asdict`, `replace` and `is_dataclass` work on
its classes: their `__dataclass_fields__` is built on first use.

Why not `dataclasses`: `memstrata context` starts before every agent turn (issue 21:
<= 150 ms). `dataclasses` compiles each class's methods from source text with `exec`
(282 methods for the 51 classes a context imports, ~0.6 ms a frozen class) and
imports `inspect` (with `ast`, `dis`, `tokenize`): together a third of a context's
instructions. Here each method is one of a few shared functions closed over the
class's field names, so building a class is a dictionary walk; an instance built
from positional arguments costs what a dataclass's does, one built by keyword a few
hundred nanoseconds more (docs/scale.md, "Value types without dataclasses").

Example:
    >>> @value_type(frozen=True)
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> Point(1), Point(1) == Point(x=1, y=0), hash(Point(1)) == hash((1, 0))
    (Point(x=1, y=0), True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")


class _Missing:
    """No default given (`dataclasses.MISSING`'s counterpart)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """What `field()` returns in a class body, read once when the class is built."""

    __slots__ = ("compare", "default", "default_factory", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field's default, or the function that makes one per instance, and whether it
    is shown by `repr` and compared (as `dataclasses.field`)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr, compare)


@overload
def value_type(cls: type[_T], /) -> type[_T]: ...


@overload
def value_type(*, frozen: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field,))
def value_type(cls: type[_T] | None = None, /, *, frozen: bool = False) -> Any:
    """Make `cls` a value class (see the module docstring); `frozen` forbids assigning
    its fields after `__init__` and makes it hashable."""
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


def _build(cls: type[_T], frozen: bool) -> type[_T]:
    names, fields, kinds = _fields(cls)
    template = {n: f.default for n, f in fields.items()}
    required = tuple(
        n for n, f in fields.items() if f.default is MISSING and f.default_factory is MISSING
    )
    made = tuple(
        (n, f.default_factory) for n, f in fields.items() if f.default_factory is not MISSING
    )
    methods: dict[str, Any] = {
        "__init__": _init(cls, names, template, required, made),
        "__repr__": _repr(tuple(n for n in names if fields[n].repr)),
        "__eq__": _eq(_key(tuple(n for n in names if fields[n].compare))),
        "__match_args__": names,
        "__dataclass_fields__": _DataclassFields(names, fields, kinds),
    }
    if frozen:
        key = _key(tuple(n for n in names if fields[n].compare))
        methods["__hash__"] = lambda self: hash(key(self))
        methods["__setattr__"], methods["__delattr__"] = _frozen(cls, frozenset(names))
    elif "__hash__" not in cls.__dict__:
        methods["__hash__"] = None  # a mutable class that compares by value: unhashable
    for name, method in methods.items():
        if name not in cls.__dict__:
            if isinstance(method, type(_build)):
                method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
    return cls


def _fields(cls: type) -> tuple[tuple[str, ...], dict[str, Field], dict[str, Any]]:
    """`cls`'s fields in order, from its annotations and class attributes; a `field()`
    in the class body is replaced by its default (or removed, as `dataclasses` does)."""
    fields: dict[str, Field] = {}
    kinds: dict[str, Any] = {}
    defaulted = False
    for name, kind in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 (no inspect)
        if any(w in str(kind) for w in ("ClassVar", "InitVar", "KW_ONLY")):
            raise TypeError(f"{cls.__name__}.{name}: value_type has no {kind}")
        found = cls.__dict__.get(name, MISSING)
        spec = found if isinstance(found, Field) else Field(found, MISSING, True, True)
        if isinstance(found, Field):
            if spec.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        if spec.default is not MISSING and type(spec.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(spec.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        if spec.default is not MISSING or spec.default_factory is not MISSING:
            defaulted = True
        elif defaulted:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        fields[name] = spec
        kinds[name] = kind
    return tuple(fields), fields, kinds


def _init(
    cls: type,
    names: tuple[str, ...],
    template: dict[str, Any],
    required: tuple[str, ...],
    made: tuple[tuple[str, Callable[[], Any]], ...],
) -> Callable[..., None]:
    """`__init__`: all fields given by position is the fast path (a dataclass's cost);
    otherwise the arguments are bound as Python binds them, with the same errors."""
    count = len(names)
    post = "__post_init__" in cls.__dict__
    me = f"{cls.__qualname__}.__init__()"
    least = len(required) + 1
    takes = f"from {least} to {count + 1}" if least <= count else str(count + 1)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs or len(args) != count:
            if len(args) > count:
                given = len(args) + 1
                raise TypeError(f"{me} takes {takes} positional arguments but {given} were given")
            values = template.copy()
            values.update(zip(names, args, strict=False))
            if kwargs:
                for name in names[: len(args)]:
                    if name in kwargs:
                        raise TypeError(f"{me} got multiple values for argument {name!r}")
                values.update(kwargs)
                if len(values) != count:
                    wrong = next(k for k in kwargs if k not in template)
                    raise TypeError(f"{me} got an unexpected keyword argument {wrong!r}")
            missing = [n for n in required if values[n] is MISSING]
            if missing:
                raise TypeError(_missing(me, missing))
            for name, make in made:
                if values[name] is MISSING:
                    values[name] = make()
            self.__dict__.update(values)
        else:
            self.__dict__.update(zip(names, args, strict=True))
        if post:
            self.__post_init__()

    return __init__


def _missing(me: str, names: list[str]) -> str:
    """Python's own words for missing arguments."""
    quoted = [repr(n) for n in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    s = "" if len(names) == 1 else "s"
    return f"{me} missing {len(names)} required positional argument{s}: {listed}"


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of `names`' values an instance compares and hashes by."""
    if len(names) > 1:
        return attrgetter(*names)  # a tuple for 2+ names
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join([f"{n}={getattr(self, n)!r}" for n in names])
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _frozen(cls: type, names: frozenset[str]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The frozen `__setattr__` and `__delattr__`, as `dataclasses` writes them."""
    base: Any = cls

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(base, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(base, self).__delattr__(name)

    return __setattr__, __delattr__


class _DataclassFields:
    """`__dataclass_fields__`, built (with `dataclasses`) the first time something asks:
    `dataclasses.fields`, `asdict`, `replace`, `is_dataclass`."""

    def __init__(self, names: tuple[str, ...], fields: dict[str, Field], kinds: dict[str, Any]):
        self.spec = (names, fields, kinds)

    def __get__(self, obj: Any, owner: type) -> dict[str, Any]:
        import dataclasses

        names, fields, kinds = self.spec
        built: dict[str, Any] = {}
        for name in names:
            f = fields[name]
            made: Any = dataclasses.field(
                default=dataclasses.MISSING if f.default is MISSING else f.default,
                default_factory=(
                    dataclasses.MISSING if f.default_factory is MISSING else f.default_factory
                ),
                repr=f.repr,
                compare=f.compare,
            )
            made.name, made.type = name, kinds[name]
            made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # fields() keeps these
            built[name] = made
        type.__setattr__(owner, "__dataclass_fields__", built)
        return built


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of a value-type instance with `changes` (`dataclasses.replace`, without
    building the class's `dataclasses` fields first).

    Example:
        >>> @value_type(frozen=True)
        ... class Pin:
        ...     name: str
        ...     n: int = 0
        >>> replace(Pin("a"), n=2)
        Pin(name='a', n=2)
    """
    kept = {n: getattr(obj, n) for n in type(obj).__match_args__ if n not in changes}  # type: ignore[attr-defined]
    return obj.__class__(**kept, **changes)

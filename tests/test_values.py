"""`memstrata.values.value_type` behaves as `dataclasses.dataclass` did for the same class
body: construction, errors, repr, equality, hashing, frozenness, and the `dataclasses`
helpers (`fields`, `asdict`, `replace`, `is_dataclass`) on its instances."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from memstrata.values import field, value_type


def _pair(frozen: bool) -> tuple[type[Any], type[Any]]:
    """The same class body built by `dataclasses` and by `value_type`."""

    class Entry:
        """An entry."""

        kind: str
        text: str
        score: float = 0.5
        tags: tuple[str, ...] = ()
        meta: dict[str, Any] = dataclasses.field(default_factory=dict)
        note: str = dataclasses.field(default="", compare=False, repr=False)

    made = dataclasses.dataclass(frozen=frozen)(Entry)

    class Entry:  # type: ignore[no-redef]
        """An entry."""

        kind: str
        text: str
        score: float = 0.5
        tags: tuple[str, ...] = ()
        meta: dict[str, Any] = field(default_factory=dict)
        note: str = field(default="", compare=False, repr=False)

    ours = value_type(frozen=frozen)(Entry)
    return made, ours


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("note", "Chose SQLite"), {}),
    (("note", "Chose SQLite", 0.9, ("db",), {"a": 1}, "why"), {}),
    ((), {"kind": "fact", "text": "port 8080"}),
    (("fact",), {"text": "port", "note": "x", "tags": ("a", "b")}),
    ((), {"text": "t", "kind": "k", "meta": {"z": [1, 2]}, "score": 1}),
]
BAD_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    (("only kind",), {}),
    (("k", "t"), {"kind": "again"}),
    (("k", "t"), {"colour": "red"}),
    (("k", "t", 1.0, (), {}, "n", "extra"), {}),
]


@pytest.mark.parametrize("frozen", [True, False])
def test_value_type_matches_dataclass(frozen: bool) -> None:
    made, ours = _pair(frozen)
    for args, kwargs in CALLS:
        a, b = made(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a) == repr(b)
        assert vars(a) == vars(b) and list(vars(a)) == list(vars(b))
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert dataclasses.is_dataclass(b)
        assert [f.name for f in dataclasses.fields(a)] == [f.name for f in dataclasses.fields(b)]
        assert [f.compare for f in dataclasses.fields(b)] == [True] * 5 + [False]
        assert repr(dataclasses.replace(a, text="new")) == repr(dataclasses.replace(b, text="new"))
        assert b == ours(*args, **kwargs) and b == dataclasses.replace(b, note="other")
        assert b != dataclasses.replace(b, score=-1) and b != a and b != (b.kind, b.text)
        assert ours.__match_args__ == made.__match_args__
        assert copy.deepcopy(b) == b == copy.copy(b)
    for args, kwargs in BAD_CALLS:
        with pytest.raises(TypeError) as theirs:
            made(*args, **kwargs)
        with pytest.raises(TypeError) as mine:
            ours(*args, **kwargs)
        assert str(mine.value) == str(theirs.value)
    assert made("k", "t").meta is not made("k", "t").meta
    assert ours("k", "t").meta is not ours("k", "t").meta


def test_frozen_value_types_hash_as_dataclasses_and_refuse_assignment() -> None:
    made, ours = _pair(frozen=True)
    a, b = made("k", "t", tags=("x",)), ours("k", "t", tags=("x",))
    b = dataclasses.replace(b, meta=())  # hashable fields, as a frozen dataclass needs
    a = dataclasses.replace(a, meta=())
    assert hash(a) == hash(b) == hash(("k", "t", 0.5, ("x",), ()))
    assert len({b, dataclasses.replace(b, note="ignored")}) == 1
    for act in (lambda: setattr(b, "text", "x"), lambda: delattr(b, "text")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            act()
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.other = 1


def test_mutable_value_types_are_unhashable_and_assignable() -> None:
    made, ours = _pair(frozen=False)
    b = ours("k", "t")
    b.text = "changed"
    assert b.text == "changed" and made.__hash__ is None and ours.__hash__ is None
    with pytest.raises(TypeError):
        hash(b)


def test_value_type_refuses_what_dataclass_refuses() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @value_type
        class Bad:
            a: int = 0
            b: int

    with pytest.raises(ValueError, match="mutable default"):

        @value_type
        class Shared:
            items: list[int] = []  # noqa: RUF012


def test_post_init_runs_after_the_fields_are_set() -> None:
    seen = []

    @value_type(frozen=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            seen.append(self.n)
            if self.n < 0:
                raise ValueError("negative")

    assert Checked(n=3).n == 3 and seen == [3]
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_no_module_builds_its_value_classes_with_dataclasses() -> None:
    """One kind of value type (cold21d): a module that imports `dataclasses` to build a
    class brings back what a context's start-up no longer pays (ctx19h's `Reversal`
    landed as a `@dataclass` the same day). Reading `dataclasses.fields` etc. is fine."""
    import re
    from pathlib import Path

    import memstrata

    root = Path(memstrata.__file__).parent
    built = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if re.search(r"^\s*@(?:dataclasses\.)?dataclass\b", p.read_text(encoding="utf-8"), re.M)
    ]
    assert built == []

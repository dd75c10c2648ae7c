"""What a record is embedded as: whole when short, chunks on its own boundaries when long."""

from __future__ import annotations

from memstrata.index.units import CHUNK_CHARS, MAX_UNITS, chunks, unit_texts


def test_a_short_record_is_one_unit_with_its_title() -> None:
    assert unit_texts("Caroline", "I went to a support group.") == [
        "Caroline\nI went to a support group."
    ]
    assert unit_texts("", "no title") == ["no title"]


def test_a_long_record_is_cut_at_paragraphs_then_sentences_and_keeps_every_word() -> None:
    para = "The invoice numbers follow a fixed scheme. " * 10  # ~430 characters
    body = "\n\n".join([para.strip(), "Short aside.", para.strip(), "x" * 50])
    units = unit_texts("Assistant", body)
    assert len(units) > 1 and all(u.startswith("Assistant\n") for u in units)
    assert all(len(u) - len("Assistant\n") <= CHUNK_CHARS for u in units)
    words = [w for u in units for w in u.removeprefix("Assistant\n").split()]
    assert words == body.split()  # nothing lost, nothing repeated

    one = "word " * 400  # one paragraph of 2,000 characters, no sentence end
    pieces = chunks(one.strip(), 600)
    assert all(len(p) <= 600 for p in pieces) and " ".join(pieces).split() == one.split()
    sentences = "A sentence that ends here. " * 40
    assert all(p.endswith(".") for p in chunks(sentences.strip(), 600))


def test_units_are_bounded() -> None:
    huge = "\n\n".join(f"paragraph {i} " + "y" * 550 for i in range(100))
    assert len(unit_texts("t", huge)) == MAX_UNITS


def test_a_markdown_list_is_also_embedded_item_by_item() -> None:
    """A section of unrelated bullets gets one unit per item besides the whole (its dense
    score is the max): "## Decisions" holding the database among three others is found
    by a question about the database alone."""
    body = "## Decisions\n- Database: PostgreSQL 16\n- Passwords: argon2id\n1. Login: JWT\n"
    units = unit_texts("Decisions", body, items=True)
    assert units[0] == f"Decisions\n{body}"
    assert units[1:] == [
        "Decisions\nDatabase: PostgreSQL 16",
        "Decisions\nPasswords: argon2id",
        "Decisions\nLogin: JWT",
    ]
    assert unit_texts("Decisions", body) == [f"Decisions\n{body}"]  # other layers: whole
    assert unit_texts("Now", "- one thing only", items=True) == ["Now\n- one thing only"]
    many = "\n".join(f"- item {i}" for i in range(100))
    assert len(unit_texts("t", many, items=True)) == MAX_UNITS

"""The dense score of a record of several units names the unit that gave it, without a
Python loop over the long records (`index.vector_matrix.Matrix._argmax`)."""

from __future__ import annotations

import numpy as np

from memstrata.index.vector_matrix import Matrix, Record


def _matrix(counts: list[int], seed: int = 7) -> Matrix:
    rng = np.random.default_rng(seed)
    records = {
        f"r{i:04d}": Record(
            units={k: rng.standard_normal(8).astype(np.float32) for k in range(c)},
            layer="session",
            thread=None,
            pos=None,
        )
        for i, c in enumerate(counts)
    }
    return Matrix(np, 8, records)


def test_the_best_unit_of_each_record_is_named_first_on_a_tie() -> None:
    counts = [1, 3, 1, 5, 2, 1, 4, 32, 1, 2] * 30
    m = _matrix(counts)
    q = np.ones(8, dtype=np.float32) / np.sqrt(8)
    best, _source, detail = m.score(q)
    su = np.einsum("ij,j->i", m.units, q)  # as `score` computes it
    for i, c in enumerate(m.counts):
        s = int(m.starts[i])
        want = int(np.argmax(su[s : s + int(c)]))  # numpy: the first max
        assert detail[i] == m.unit_no[s + want]
        assert abs(best[i] - su[s : s + int(c)].max()) < 1e-6
    # a tie between two units of one record names the first
    tied = Matrix(
        np,
        2,
        {
            "a": Record(
                units={0: np.array([1.0, 0.0]), 1: np.array([1.0, 0.0])},
                layer="x",
                thread=None,
                pos=None,
            )
        },
    )
    assert tied._argmax(np.array([1.0, 1.0], dtype=np.float32), np.array([1.0])).tolist() == [0]


def test_a_store_of_single_units_needs_no_search_for_its_best_unit() -> None:
    m = _matrix([1] * 50)
    q = np.ones(8, dtype=np.float32) / np.sqrt(8)
    assert m.score(q)[2].tolist() == [0] * 50

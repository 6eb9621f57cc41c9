"""Writing a step down (``fsmviz.generation.records``): the model's five likeliest tokens,
found without sorting the vocabulary, are exactly a full sort's."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz.generation.records import TOP_CANDIDATES, likeliest
from fsmviz.generation.samplers import softmax


@pytest.mark.parametrize("spread", [0.3, 3.0, 30.0])  # flat (the top-k fallback) to peaked
def test_the_five_likeliest_are_those_of_a_full_sort(spread) -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        probs = softmax((rng.standard_normal(49_152) * spread).astype(np.float32))
        probs[rng.integers(0, 49_152, 3)] = probs.max()  # ties at the top: lowest id first
        whole = np.argsort(-probs, kind="stable")[:TOP_CANDIDATES]
        np.testing.assert_array_equal(likeliest(probs), whole)


def test_a_vocabulary_smaller_than_five_gives_all_its_tokens() -> None:
    assert likeliest(np.array([0.2, 0.5, 0.3], dtype=np.float32)).tolist() == [1, 2, 0]

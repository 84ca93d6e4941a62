"""`zinc.testing.compare`: the argmax agreement over sure rows and the misses it counts."""

import numpy as np

from zinc.testing.compare import argmax_misses, compare_logits


def test_misses_are_the_sure_rows_that_disagree():
    ref = np.array([[1.0, 0.9, 0.0], [1.0, 0.99, 0.0], [0.0, 2.0, 1.0], [3.0, 0.0, 0.5]])
    got = np.array([[0.9, 1.2, 0.0], [0.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.1, 0.0, 0.4]])
    res = compare_logits(got, ref)
    assert res["n_sure"] == 3 and res["argmax_agree"] == 1 / 3  # row 1's margin 0.01 is not sure
    miss = argmax_misses(got, ref)
    assert [m["pos"] for m in miss] == [0, 3]
    np.testing.assert_allclose([m["ref_margin"] for m in miss], [0.1, 2.5])
    np.testing.assert_allclose([m["got_gap"] for m in miss], [0.3, 0.3])
    assert argmax_misses(got, ref, margin=0.0)[1]["pos"] == 1


def test_excluded_rows_are_not_sure():
    """Rows named by `exclude` (say, a near-tied expert routing) leave the agreement and the misses; KL keeps them."""
    ref = np.array([[1.0, 0.9, 0.0], [3.0, 0.0, 0.5], [0.0, 2.0, 1.0]])
    got = np.array([[0.9, 1.2, 0.0], [0.1, 0.0, 0.4], [0.0, 2.0, 1.0]])
    ex = np.array([False, True, False])
    res = compare_logits(got, ref, exclude=ex)
    assert res["n_sure"] == 2 and res["argmax_agree"] == 0.5
    assert res["mean_kl"] == compare_logits(got, ref)["mean_kl"]
    assert [m["pos"] for m in argmax_misses(got, ref, exclude=ex)] == [0]

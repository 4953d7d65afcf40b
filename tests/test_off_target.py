"""Why a tip misses its goal (``fabrik_addon.off_target``): each frame off target put down to one cause."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabrik_addon.off_target import CAUSES, beyond_reach, off_target_causes, reach_span, tip_heads


def test_a_chain_reaches_from_folded_to_straight() -> None:
    assert reach_span([1.0, 1.0, 1.0]) == (0.0, 3.0)
    assert reach_span([3.0, 1.0, 0.5]) == (1.5, 4.5)  # the long bone cannot fold back onto the root


def test_goals_beyond_the_span_or_inside_the_fold_are_out_of_reach_in_world_units() -> None:
    roots = np.zeros((4, 3))
    goals = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 4.4], [0.0, 0.0, 4.6], [0.0, 0.0, 9.2]])
    span = reach_span([3.0, 1.0, 0.5])
    assert beyond_reach(roots, goals, span).tolist() == [True, False, True, True]
    assert beyond_reach(roots, goals, span, np.array([1.0, 1.0, 1.0, 2.1])).tolist() == [True, False, True, False]


def test_each_missed_frame_gets_the_first_cause_that_explains_it() -> None:
    frames = [10, 11, 12, 13, 14, 15]
    goals = np.zeros((6, 3))
    tips = np.array([[0.0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]])
    flags = {
        "out_of_reach": np.array([False, True, True, False, False, False]),
        "eased": np.array([False, False, True, True, False, False]),
        "unsolved": np.array([True, True, False, False, True, False]),
    }
    limited = off_target_causes(frames, tips, goals, tolerance=0.1, limited=True, **flags)  # type: ignore[arg-type]
    assert limited == {"out of reach": (11, 12), "soft reach": (13,), "IK limits": (14,), "the scene": (15,)}
    free = off_target_causes(frames, tips, goals, tolerance=0.1, limited=False, **flags)  # type: ignore[arg-type]
    assert free["not converged"] == (14,)
    assert "IK limits" not in free


def test_a_tree_whose_solve_stalled_with_iterations_left_has_its_goals_apart() -> None:
    """Two branches pulled apart settle where their goals balance: more iterations do not help, so "not
    converged" would send the user the wrong way; a tree that ran out of iterations did not converge."""
    tips, goals = np.array([[1.0, 0, 0]] * 3), np.zeros((3, 3))
    unsolved, never = np.ones(3, dtype=bool), np.zeros(3, dtype=bool)
    stalled = np.array([True, False, True])
    kinds = {"out_of_reach": never, "eased": never, "unsolved": unsolved, "limited": False}
    tree = off_target_causes([1, 2, 3], tips, goals, tolerance=0.1, stalled=stalled, **kinds)  # type: ignore[arg-type]
    assert tree == {"goals apart": (1, 3), "not converged": (2,)}
    alone = off_target_causes([1, 2, 3], tips, goals, tolerance=0.1, **kinds)  # type: ignore[arg-type]
    assert alone == {"not converged": (1, 2, 3)}


def test_a_tip_kept_within_the_key_error_of_a_solved_goal_is_put_down_to_it_not_to_the_scene() -> None:
    """With a Key Error the keys kept may put the tip up to that far from where the solve put it (on its goal,
    within the tolerance): those frames are as asked; a frame farther out is still the scene's doing."""
    misses = np.array([0.05, 0.2, 0.3, 0.5])
    tips, never = np.stack([misses, 0 * misses, 0 * misses], axis=1), np.zeros(4, dtype=bool)
    kinds = {"out_of_reach": never, "eased": never, "unsolved": never, "limited": False}
    kept = off_target_causes([1, 2, 3, 4], tips, 0 * tips, tolerance=0.1, key_error=0.2, **kinds)  # type: ignore[arg-type]
    assert kept == {"within key error": (2, 3), "the scene": (4,)}
    dense = off_target_causes([1, 2, 3, 4], tips, 0 * tips, tolerance=0.1, **kinds)  # type: ignore[arg-type]
    assert dense == {"the scene": (2, 3, 4)}


def test_a_tip_bone_turned_to_its_goal_has_its_head_a_bone_length_back_along_its_axis() -> None:
    down = np.array([[[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]])  # turned a quarter round X: its Y axis (column) down
    assert tip_heads(np.array([[0.0, 0.3, 2.8]]), down, np.array([1.0])).tolist() == [[0.0, 0.3, 3.8]]


@given(
    st.lists(
        st.tuples(st.floats(0, 2), st.booleans(), st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=30
    ),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0.0, 0.5]),
)
def test_every_frame_off_target_has_exactly_one_cause(
    rows: list[tuple[float, bool, bool, bool, bool]], limited: bool, tree: bool, key_error: float
) -> None:
    misses = np.array([row[0] for row in rows])
    tips = np.stack([misses, np.zeros_like(misses), np.zeros_like(misses)], axis=1)
    flags = [np.array([row[k] for row in rows]) for k in (1, 2, 3, 4)]
    causes = off_target_causes(
        list(range(len(rows))),
        tips,
        np.zeros_like(tips),
        tolerance=1.0,
        out_of_reach=flags[0],
        eased=flags[1],
        unsolved=flags[2],
        limited=limited,
        stalled=flags[3] if tree else None,
        key_error=key_error,
    )
    assert set(causes) <= set(CAUSES)
    named = sorted(frame for frames in causes.values() for frame in frames)
    assert named == [i for i, miss in enumerate(misses) if miss > 1.0 * (1.0 + 1e-6)]


@pytest.mark.parametrize("tolerance", [1e-3, 0.5])
def test_nothing_is_named_where_every_tip_is_within_the_tolerance(tolerance: float) -> None:
    tips = np.full((3, 3), tolerance / 4)
    everything = np.ones(3, dtype=bool)
    found = off_target_causes(
        [1, 2, 3],
        tips,
        np.zeros((3, 3)),
        tolerance=tolerance,
        out_of_reach=everything,
        eased=everything,
        unsolved=everything,
        limited=True,
    )
    assert found == {}

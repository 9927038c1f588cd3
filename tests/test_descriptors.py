"""The referee's descriptors (``play.descriptors``): bots started in groups that cannot
exhaust what the referee has to spare."""

from __future__ import annotations

import resource

import pytest
from ohseven.referee.play.descriptors import FD_RESERVE, open_descriptors, start_groups


def spare() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0] - open_descriptors() - FD_RESERVE


def test_bots_that_fit_together_start_together():
    assert start_groups([("a", 1), ("b", 1), ("c", 1)]) == [[0, 1, 2]]


def test_groups_never_hold_more_than_the_spare_descriptors():
    room = spare()
    half = room // 2 + 1
    assert start_groups([("a", half), ("b", half), ("c", 1)]) == [[0], [1, 2]]


def test_a_bot_that_alone_could_exhaust_them_is_warned_of_and_started_alone():
    room = spare()
    with pytest.warns(RuntimeWarning, match="'flood' could open"):
        groups = start_groups([("a", 1), ("flood", room + 1), ("b", 1)])
    assert groups == [[0], [1], [2]]

"""Finding the dependency cycle a new edge would close."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from ralph_desk.domain.graph import find_cycle, format_path


def test_an_edge_onto_an_empty_graph_closes_no_cycle() -> None:
    assert find_cycle([], (1, 2)) is None


def test_a_self_dependency_is_a_cycle_of_one_task() -> None:
    assert find_cycle([(1, 2)], (3, 3)) == [3, 3]


def test_reversing_an_existing_edge_closes_a_two_task_cycle() -> None:
    assert find_cycle([(5, 3)], (3, 5)) == [3, 5, 3]


def test_a_long_cycle_is_reported_from_the_new_task_along_the_dependencies() -> None:
    edges = [(2, 3), (3, 4), (4, 1)]

    assert find_cycle(edges, (1, 2)) == [1, 2, 3, 4, 1]


def test_the_shortest_cycle_is_reported_when_there_are_several() -> None:
    edges = [(2, 3), (3, 4), (4, 1), (2, 1)]

    assert find_cycle(edges, (1, 2)) == [1, 2, 1]


def test_a_diamond_of_dependencies_is_no_cycle() -> None:
    edges = [(1, 2), (1, 3), (2, 4), (3, 4)]

    assert find_cycle(edges, (1, 4)) is None


def test_an_edge_into_an_unrelated_chain_is_no_cycle() -> None:
    assert find_cycle([(2, 3), (3, 4)], (4, 5)) is None


def test_a_path_reads_as_task_numbers_joined_by_arrows() -> None:
    assert format_path([3, 5, 3]) == "#3 → #5 → #3"


def _reaches(edges: list[tuple[int, int]], start: int, goal: int) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(target for source, target in edges if source == node)
    return False


@given(
    st.lists(st.tuples(st.integers(1, 8), st.integers(1, 8)), max_size=20),
    st.tuples(st.integers(1, 8), st.integers(1, 8)),
)
def test_a_cycle_is_found_exactly_when_the_new_edge_closes_one(
    edges: list[tuple[int, int]], new_edge: tuple[int, int]
) -> None:
    cycle = find_cycle(edges, new_edge)
    task_id, depends_on_id = new_edge

    assert (cycle is not None) == _reaches(edges, depends_on_id, task_id)
    if cycle is not None:
        assert cycle[0] == cycle[-1] == task_id
        steps = list(itertools.pairwise(cycle))
        assert steps[0] == new_edge
        assert all(step in edges for step in steps[1:])

"""The overlap rule: which runnable task starts beside the running ones."""

from __future__ import annotations

from ralph_desk.domain.overlap import Footprint, choose, normal_path, shares_files


def test_context_files_compare_as_normalised_relative_paths() -> None:
    assert normal_path("./src//tide.py") == normal_path("src/tide.py/") == "src/tide.py"
    assert normal_path("src\\tide.py") == "src/tide.py"


def test_a_shared_file_or_a_folder_holding_it_overlaps_but_a_sibling_does_not() -> None:
    running = [Footprint(1, "charts", ("src/charts/tide.py",))]

    assert shares_files(Footprint(2, "feeds", ("./src/charts/tide.py",)), running)
    assert shares_files(Footprint(3, "feeds", ("src/charts",)), running)
    assert not shares_files(Footprint(4, "feeds", ("src/charts/tide_test.py",)), running)
    assert not shares_files(Footprint(5, "feeds", ()), running)


def test_a_task_of_a_free_feature_is_preferred_over_an_earlier_one_of_a_busy_feature() -> None:
    running = [Footprint(1, "charts")]
    candidates = [Footprint(2, "charts"), Footprint(3, "feeds")]

    chosen = choose(candidates, running)

    assert chosen is not None and chosen.task_id == 3


def test_with_only_busy_features_left_the_first_task_sharing_no_file_runs() -> None:
    running = [Footprint(1, "charts", ("a.py",))]
    candidates = [Footprint(2, "charts", ("a.py",)), Footprint(3, "charts", ("b.py",))]

    chosen = choose(candidates, running)

    assert chosen is not None and chosen.task_id == 3


def test_a_task_sharing_a_file_with_running_work_waits_even_when_nothing_else_can_run() -> None:
    assert choose([Footprint(2, "feeds", ("a.py",))], [Footprint(1, "charts", ("a.py",))]) is None
    assert choose([], []) is None

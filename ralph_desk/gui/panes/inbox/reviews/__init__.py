"""The Reviews tab: the work of tasks in review, their diffs, comments and the human's decision."""

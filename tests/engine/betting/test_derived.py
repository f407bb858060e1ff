"""engine/betting/derived.py: a query's last answer, by the identity of what it was derived from."""

from __future__ import annotations

from engine.betting.derived import LastAnswer


def test_the_same_objects_give_the_remembered_answer() -> None:
    calls: list[int] = []

    def answer(value: int) -> int:
        calls.append(value)
        return value

    last: LastAnswer[int] = LastAnswer()
    a, b = (1, 2), frozenset({3})
    assert last.get(a, b, None, None, answer, 7) == 7
    assert last.get(a, b, None, None, answer, 8) == 7
    assert calls == [7]


def test_an_equal_but_other_object_is_asked_again() -> None:
    last: LastAnswer[str] = LastAnswer()
    first, second = {"seat": 1}, {"seat": 1}  # equal, not the same object
    assert last.get(first, None, None, None, str, "first") == "first"
    assert last.get(second, None, None, None, str, "second") == "second"
    assert last.get(first, None, None, None, str, "again") == "again"  # one entry only

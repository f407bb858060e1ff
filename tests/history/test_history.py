"""``tablectl history``: hands read back from the journal's published records, listed, filtered
and shown street by street with their alerts where they happened."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from controller.history.query import _STATE_IN_LINE, Filters, read_history
from controller.history.render import detail, listing, section_of
from controller.journal import JournalFiles
from tests.history.support import HIDDEN, T0, sample_journal

TABLECTL = Path(sys.executable).parent / "tablectl"


def _config(tmp_path: Path) -> Path:
    sample_journal(tmp_path / "journal.jsonl")
    path = tmp_path / "t1.toml"
    path.write_text(
        '[table]\nid = "t1"\nseats = 10\n\n[mqtt]\nurl = "mqtt://127.0.0.1:1883"\n\n'
        '[decks]\nregistry = "decks.csv"\n\n[journal]\npath = "journal.jsonl"\n',
        encoding="utf-8",
    )
    (tmp_path / "decks.csv").write_text("uid,deck,card\n", encoding="utf-8")
    return path


def _tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TABLECTL), "history", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_journal_gives_every_hand_with_its_alerts(tmp_path: Path) -> None:
    history = read_history(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    assert history.problems == []
    played = history.played()
    assert [e.hand for e in played] == [7, 8, 9]
    seven, eight, nine = played
    assert [(a.code, a.status) for a in seven.alerts] == [
        ("exposed_card", "raised"),
        ("exposed_card", "resolved"),
        ("premature_turn", "raised"),
    ]
    assert seven.codes() == ["exposed_card", "premature_turn"]
    assert eight.alerts == []
    assert not eight.voided
    assert nine.voided
    assert nine.codes() == ["misdeal_extra_cards"]
    assert seven.record > 0
    assert seven.phases["flop"] == T0 + timedelta(seconds=10)


def test_filters_by_seat_code_time_and_count(tmp_path: Path) -> None:
    history = read_history(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    hands = history.played()

    def chosen(**kwargs: object) -> list[int]:
        return [e.hand for e in Filters(**kwargs).select(hands)]  # type: ignore[arg-type]

    assert chosen(last=2) == [8, 9]
    assert chosen(last=0) == [7, 8, 9]
    assert chosen(seat=4) == [8]
    assert chosen(seat=3) == [7, 9]
    assert chosen(code="premature_turn") == [7]
    assert chosen(since=T0 + timedelta(seconds=60)) == [8, 9]
    assert chosen(until=T0 + timedelta(seconds=60)) == [7]


def test_one_hand_street_by_street_with_the_alerts_in_place(tmp_path: Path) -> None:
    history = read_history(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    seven = history.hands[7]
    assert [section_of(seven, a) for a in seven.alerts] == ["dealing", "preflop", "flop"]
    text = detail(seven)
    lines = text.splitlines()
    assert lines[0].startswith("Hand 7: showdown, ended 2026-11-30 20:00:30.000Z")
    heads = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert heads[2:] == ["Dealing", "Preflop", "Flop", "Turn", "River", "Showdown", "Award"]
    assert "Flop  Ah Kd 7c" in lines
    assert "Turn  2s" in lines
    assert "River  9h" in lines
    flop = lines.index("Flop  Ah Kd 7c")
    assert lines[flop + 1 : flop + 5] == [
        "  seat 2 checks",
        "  seat 3 bets 10",
        "  seat 1 calls 10",
        "  seat 2 folds",
    ]
    assert "premature_turn" in lines[flop + 5]  # raised at the flop, after its actions
    assert "  seat 1 raises to 6" in lines  # what it put in is the same: said once
    assert "  seat 2 calls 5" in lines  # the amount a call puts in (1 was posted)
    assert "  seat 3 shows As Ac (three of a kind)" in lines
    assert any(line.startswith("  main pot 78 (eligible 1 3): won by 3") for line in lines)
    for card in HIDDEN:
        assert card not in text


def test_a_voided_hand_is_shown_as_voided_with_its_alerts(tmp_path: Path) -> None:
    history = read_history(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    text = detail(history.hands[9])
    assert "VOIDED (misdeal)" in text.splitlines()[0]
    assert "misdeal_extra_cards seat 3 raised" in text
    assert "Award" not in text
    assert "no award" in text
    assert "VOIDED (misdeal)" in listing(history.played())


def test_the_command_lists_shows_and_says_what_is_missing(tmp_path: Path) -> None:
    config = _config(tmp_path)
    listed = _tablectl("--config", str(config), "--last", "5")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["#7", "#8", "#9"]
    assert "winners 3" in lines[0]
    assert "alerts exposed_card (seat 2), premature_turn" in lines[0]

    as_json = _tablectl("--config", str(config), "--seat", "4", "--json")
    assert as_json.returncode == 0, as_json.stderr
    (only,) = json.loads(as_json.stdout)
    assert (only["hand"], only["result"], only["winners"], only["alerts"]) == (8, "uncontested", [4], [])

    shown = _tablectl("show", "7", "--config", str(config))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Hand 7: showdown")
    missing = _tablectl("show", "70", "--config", str(config))
    assert missing.returncode == 2
    assert "no result of hand 70" in missing.stderr


def test_states_are_read_from_their_first_bytes_and_a_bad_line_is_reported(tmp_path: Path) -> None:
    path = sample_journal(tmp_path / "journal.jsonl")
    states = [line for line in path.read_bytes().splitlines() if b'"what":"state"' in line]
    assert states
    assert all(_STATE_IN_LINE.search(line) for line in states)  # no state needs decoding
    with path.open("ab") as file:
        file.write(b'{"kind":"published","n":99,"what":"hand","cause":1,"topic":"x","payl')
    history = read_history(JournalFiles(path))
    assert [e.hand for e in history.played()] == [7, 8, 9]
    (problem,) = history.problems
    assert problem.startswith(f"{path}:")
    assert "torn" in problem


def test_a_hand_followed_with_evidence_missing_says_so(tmp_path: Path) -> None:
    history = read_history(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    eight = history.hands[8]
    assert eight.result is not None
    assert "evidence missing" not in detail(eight)
    eight.result = eight.result.model_copy(update={"evidence_missing": True})
    assert "(evidence missing)" in listing([eight])
    assert "Followed with evidence missing" in detail(eight).splitlines()[2]

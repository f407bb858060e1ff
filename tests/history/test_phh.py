"""The PHH export: every exported hand loads in PokerKit's ``HandHistory`` and replays to the
result's nets (final minus starting stack == the seat's pot shares minus what it put in, plus the
uncalled chips returned to it)."""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from pokerkit import HandHistory

from contract.models import Alert, HandResult, PublicState
from controller.history.cli import export_phh
from controller.history.phh import Stakes, player_order, to_phh
from controller.history.query import read_history
from controller.journal import JournalFiles
from tests.history.pokerkit_hands import play
from tests.history.support import (
    HIDDEN,
    T0,
    misdeal_hand,
    sample_journal,
    showdown_hand,
    uncontested_hand,
    write_journal,
)

#: Random hands PokerKit plays, exported and replayed (2 to 10 players, antes, all-ins, side
#: pots, splits, showdowns with mucked hands, hands won uncontested).
ROUND_TRIPS = 400


def replayed_nets(text: str) -> dict[int, int]:
    """Load a PHH text with PokerKit, play it to the end; each seat's final minus starting stack."""
    history = HandHistory.loads(text)
    *_, final = history
    assert not final.status, "the hand must be over"
    seats = list(history.seats)  # type: ignore[arg-type]
    return {seats[i]: final.stacks[i] - final.starting_stacks[i] for i in range(len(seats))}


def expected_nets(result: HandResult) -> dict[int, int]:
    """What the result says each seat gained: its pot shares, minus what it put in, plus the
    uncalled chips that went back to it (what was put in and is in no pot nor the rake belongs
    to the seat that put in the most). ``awarded`` is not used: it is what the dealer's pushes
    showed, empty at a table without chip reading."""
    put_in = dict.fromkeys(result.seats, 0)
    for action in result.actions:
        put_in[action.seat] += action.amount
    net = {seat: -amount for seat, amount in put_in.items()}
    for pot in result.pots:
        for share in pot.shares:
            net[share.seat] += share.amount
    uncalled = sum(put_in.values()) - sum(pot.amount for pot in result.pots) - result.rake
    if uncalled:
        net[max(put_in, key=lambda seat: put_in[seat])] += uncalled
    return net


def test_random_hands_played_by_pokerkit_round_trip(tmp_path: Path) -> None:
    rng = random.Random(14)
    kinds: set[str] = set()
    for hand in range(1, ROUND_TRIPS + 1):
        played = play(rng, hand)
        text = to_phh(played.result, played.stakes, table="t1")
        assert replayed_nets(text) == expected_nets(played.result) == played.net, text
        kinds.add(played.result.result)
        if len(played.result.seats) == 2:
            kinds.add("heads-up")
        if any(a.action == "all_in" for a in played.result.actions):
            kinds.add("all-in")
    assert kinds == {"showdown", "uncontested", "heads-up", "all-in"}


def test_players_follow_the_button_and_blinds_as_phh_reads_them() -> None:
    result = showdown_hand()
    assert player_order(result) == [2, 3, 1]  # small blind, big blind, button
    text = to_phh(result)
    assert "blinds_or_straddles = [1, 2, 0]" in text
    assert '  "p2 sm AsAc",\n  "p3 sm",\n]' in text  # seat 3 shows, seat 1 mucks
    assert replayed_nets(text) == {1: -36, 2: -6, 3: 42}
    heads_up = to_phh(uncontested_hand())
    # Heads-up, PHH's p1 is the big blind (seat 2) and the button (seat 4) posts the small blind,
    # listed reversed as PHH reads two players' blinds.
    assert "seats = [2, 4]" in heads_up
    assert "blinds_or_straddles = [1, 2]" in heads_up
    assert replayed_nets(heads_up) == {2: -2, 4: 2}


def test_an_all_in_seat_starts_with_what_it_put_in_and_others_deep() -> None:
    played = play(random.Random(3), 1)
    while not any(a.action == "all_in" for a in played.result.actions):
        played = play(random.Random(played.result.hand + 100), played.result.hand + 1)
    text = to_phh(played.result, played.stakes)
    stacks = next(line for line in text.splitlines() if line.startswith("starting_stacks"))
    assert "1000000000" in stacks
    put_in = {
        seat: sum(a.amount for a in played.result.actions if a.seat == seat) for seat in played.result.seats
    }
    all_in = {a.seat for a in played.result.actions if a.action == "all_in"}
    history = HandHistory.loads(text)
    for index, seat in enumerate(history.seats):  # type: ignore[arg-type]
        if seat in all_in:
            assert history.starting_stacks[index] == put_in[seat]


def test_export_writes_played_hands_as_phh_and_voided_ones_as_notes(tmp_path: Path) -> None:
    history = read_history(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    out = tmp_path / "phh"
    counts = export_phh(history, out, Stakes(), table="t1")
    assert (counts.played, counts.voided) == (2, 1)
    assert sorted(p.name for p in out.iterdir()) == [
        "hand-000007.phh",
        "hand-000008.phh",
        "hand-000009.voided.txt",
    ]
    for path in out.glob("*.phh"):
        text = path.read_text(encoding="utf-8")
        result = history.hands[int(path.name[5:11])].result
        assert result is not None
        assert replayed_nets(text) == expected_nets(result)
        for card in HIDDEN:
            assert card not in text
    note = (out / "hand-000009.voided.txt").read_text(encoding="utf-8")
    assert "voided (misdeal)" in note
    assert "misdeal_extra_cards seat 3 raised" in note
    # --from/--to: hand numbers or times, inclusive.
    again = export_phh(history, tmp_path / "some", Stakes(), start=8, end=8)
    assert (again.played, again.voided) == (1, 0)
    assert [p.name for p in (tmp_path / "some").iterdir()] == ["hand-000008.phh"]
    by_time = export_phh(history, tmp_path / "late", Stakes(), start=T0 + timedelta(seconds=60))
    assert (by_time.played, by_time.voided) == (1, 1)  # hands 8 and 9 ended after 20:01


def test_a_journal_of_random_hands_exports_every_one(tmp_path: Path) -> None:
    rng = random.Random(5)
    played = [p for p in (play(rng, hand) for hand in range(1, 61)) if p.stakes.ante == 0]
    path = write_journal(tmp_path / "journal.jsonl", [p.result for p in played])
    history = read_history(JournalFiles(path))
    counts = export_phh(history, tmp_path / "phh", Stakes(ante=0))
    assert counts.played == len(played) > 30
    for p in played:
        text = (tmp_path / "phh" / f"hand-{p.result.hand:06d}.phh").read_text(encoding="utf-8")
        assert replayed_nets(text) == p.net


def test_a_straddle_is_exported_as_the_third_of_blinds_or_straddles_and_replays() -> None:
    """Straddled hands the engine followed (PokerKit's straddle series, fed as action inputs):
    PHH's ``blinds_or_straddles`` is ``[sb, bb, straddle, 0...]`` and the file replays to the
    result's nets."""
    from testing.engine_oracle import feed
    from testing.oracle_hand import play_hand

    straddled = 0
    for seed in range(40):
        hand = play_hand(seed, straddle=True)
        (result,) = feed(hand, "actions").hands
        s = hand.stakes
        text = to_phh(result, Stakes(s.ante, s.small_blind, s.big_blind, s.structure))
        posted = [a.amount for a in result.actions if a.action == "post" and a.amount > s.ante]
        if len(result.seats) >= 3 and 2 * s.big_blind in posted:
            straddled += 1
            blinds = [s.small_blind, s.big_blind, 2 * s.big_blind] + [0] * (len(result.seats) - 3)
            assert f"blinds_or_straddles = {blinds}" in text, text
        if not result.rake:  # (a reader rakes with its own function: ``_rake`` is for it)
            assert replayed_nets(text) == expected_nets(result), text
    assert straddled >= 10


def _table_config(tmp_path: Path, journal: Path, stakes: str = "") -> Path:
    path = tmp_path / "t1.toml"
    path.write_text(
        '[table]\nid = "t1"\nseats = 10\n\n[decks]\nregistry = "decks.csv"\n\n'
        f'[journal]\npath = "{journal.name}"\n{stakes}',
        encoding="utf-8",
    )
    (tmp_path / "decks.csv").write_text("uid,deck,card\n", encoding="utf-8")
    return path


def _export(config: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "history",
            "export",
            "--phh",
            str(out),
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_table_without_stakes_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "journal.jsonl", [_no_posts(showdown_hand())])
    out = tmp_path / "phh"
    result = _export(_table_config(tmp_path, journal), out)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: table t1 has no [stakes]: its hands carry no blinds and no bets, which every PHH "
        "file needs (PokerKit refuses one without them); nothing written. Add [stakes] to follow "
        "the betting (docs/game.md); tablectl history show HAND prints a hand as it is"
    )
    assert not out.exists()


def test_a_hand_without_blinds_is_named_and_not_written_the_others_are(tmp_path: Path) -> None:
    hands: list[HandResult | Alert | PublicState] = [
        showdown_hand(7),
        _no_posts(uncontested_hand(8)),
        misdeal_hand(9),
    ]
    journal = write_journal(tmp_path / "journal.jsonl", hands)
    out = tmp_path / "phh"
    result = _export(_table_config(tmp_path, journal, "\n[stakes]\nsmall_blind = 1\nbig_blind = 2\n"), out)
    assert result.returncode == 0, result.stderr
    assert "warning: hand 8: no blind or ante was posted, which PHH needs: not written" in result.stderr
    assert "1 hands written as PHH, 1 voided hands as notes" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["hand-000007.phh", "hand-000009.voided.txt"]
    HandHistory.loads((out / "hand-000007.phh").read_text(encoding="utf-8"))


def _no_posts(result: HandResult) -> HandResult:
    """The hand as a table without [stakes] publishes it: no blind posted."""
    return result.model_copy(update={"actions": [a for a in result.actions if a.action != "post"]})

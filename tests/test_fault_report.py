"""Faults as a bot's author reads them: locations, groups, paths, exits, where and the command."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st
from ohseven.referee.fault_report import (
    FaultSite,
    author_paths,
    exit_text,
    group_faults,
    location,
    public_paths,
    render_groups,
    replay_command,
    where,
)

STAGED = "/tmp/ohseven-stage-ab12_x/0123456789abcdef0123456789abcdef/bots/keybot.py"
TOURNEY = "/srv/org/out/cup/.bots/fedcba9876543210fedcba9876543210/bots/keybot.py"


def trace(path: str, card: str) -> str:
    return (
        f"choose_play raised KeyError: '{card}' (game 1, round 2, trick 4)\n"
        "Traceback (most recent call last):\n"
        f'  File "{path}", line 11, in choose_play\n'
        "    return table[view.legal[0]]\n"
        f"KeyError: '{card}'"
    )


class TestPaths:
    def test_staged_copies_read_as_the_bots_own_folder(self):
        assert author_paths(f'File "{STAGED}", line 3') == 'File "bots/keybot.py", line 3'
        assert author_paths(f'File "{TOURNEY}", line 3') == 'File "bots/keybot.py", line 3'
        assert author_paths("no path here") == "no path here"

    def test_a_public_page_shows_no_host_path(self):
        text = f'File "{TOURNEY}"\n  File "/home/org/venv/lib/ohseven/sdk/bot.py", line 9'
        shown = public_paths(text)
        assert "/srv" not in shown and "/home" not in shown
        assert 'File "bots/keybot.py"' in shown and "…/sdk/bot.py" in shown


class TestLocation:
    def test_the_bots_own_last_line(self):
        """The last frame outside the libraries, the same for every card the bug meets."""
        text = trace(STAGED, "7D").replace(
            "Traceback (most recent call last):\n",
            'Traceback (most recent call last):\n  File "/usr/lib/python3.11/x.py", line 1, in f\n',
        )
        assert location("bot_error", text) == "bots/keybot.py:11 in choose_play"
        assert location("bot_error", trace(TOURNEY, "4H")) == location("bot_error", text)

    def test_without_a_traceback_numbers_and_cards_are_taken_out(self):
        first = location("timeout", "no reply to request 37 (play) within 1000 ms")
        assert first == location("timeout", "no reply to request 912 (bid) within 1500 ms")
        assert location("illegal", "card 7D is not in hand") == location(
            "illegal", "card 4H is not in hand"
        )


class TestGroups:
    @given(st.lists(st.tuples(st.sampled_from(["7D", "4H", "2S"]), st.booleans()), min_size=1))
    def test_one_bug_is_one_group(self, faults):
        """Every occurrence of a bug is in its group; the counts add up; the first kept."""
        sites = [
            FaultSite("bot_error", trace(STAGED, card), f"g{i}.json", i + 1)
            if raised
            else FaultSite("timeout", f"no reply to request {i} (play) within 1000 ms")
            for i, (card, raised) in enumerate(faults)
        ]
        groups = group_faults(sites)
        assert sum(g.count for g in groups) == len(sites)
        assert len(groups) == len({raised for _, raised in faults})
        for group in groups:
            assert group.first[0] == next(s for s in sites if s.status == group.status)
            assert len(group.first) <= 3

    def test_render_names_the_file_the_move_and_the_command(self):
        sites = [
            FaultSite("bot_error", trace(STAGED, c), "rp/m-game000.json", m, 2, 4)
            for c, m in (("7D", 10), ("4H", 26), ("2S", 41), ("3C", 57))
        ]
        lines = render_groups("keybot", group_faults(sites), "", "bots/keybot.py")
        text = "\n".join(lines)
        assert text.count("Traceback") == 1 and "ohseven-stage" not in text
        assert "bot_error x4: bots/keybot.py:11 in choose_play" in text
        assert "at rp/m-game000.json: move 10 (round 2, trick 4), move 26" in text
        assert "(and 1 more)" in text
        assert (
            "ask it again: ohseven-referee replay rp/m-game000.json --bot bots/keybot.py "
            "--at 10" in text
        )


class TestWhere:
    def test_where_and_the_command(self):
        site = FaultSite("timeout", "x", "my dir/m-game001.json", 5, 1, None)
        assert where(site) == "move 5 (round 1) of my dir/m-game001.json"
        command = replay_command(site, "bots/a bot.py")
        assert command is not None
        assert shlex.split(command)[-5:] == [
            "my dir/m-game001.json", "--bot", "bots/a bot.py", "--at", "5"
        ]  # fmt: skip
        assert replay_command(FaultSite("crash", "x", None, 5), "b.py") is None
        assert where(FaultSite("crash", "x", game="game 2")) == "game 2"


def test_exits_name_their_signal():
    assert exit_text(134) == "exited with code 134 (SIGABRT: killed by signal 6)"
    assert exit_text(-11) == "was killed by SIGSEGV"
    assert exit_text(1) == "exited with code 1"
    assert exit_text(200) == "exited with code 200"


def test_a_memory_error_names_the_limit():
    """A MemoryError's group says which limit it meets; a KeyError's does not."""
    memory = FaultSite("crash", "Traceback (most recent call last):\nMemoryError")
    lines = render_groups("big", group_faults([memory]), "")
    assert any("hint:" in line and "memory_mb" in line for line in lines)
    key = FaultSite("bot_error", trace(STAGED, "7D"))
    assert not any("hint:" in line for line in render_groups("k", group_faults([key]), ""))

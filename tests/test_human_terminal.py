"""``ohseven-referee play`` in a real terminal (tmux): a person's whole game against sandboxed
random bots, typed key by key, with bad answers and ``?`` on the way; Ctrl-C and the end of
input leave cleanly, the game so far saved (referee.human.terminal, referee.cli.play)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = str(ROOT / "example_bots" / "random_bot.py")
PROMPT = "(? for help)>"
LEGAL = re.compile(r"^Legal(?: bids)?: (.*)$")


class Terminal:
    """A tmux session of its own (private server socket) running one command."""

    def __init__(self, tmp: Path, command: list[str]):
        self.socket = f"ohseven-play-{tmp.name}"
        config = tmp / "tmux.conf"
        config.write_text("set -g history-limit 100000\n")
        self.done = tmp / "exit-status"
        line = f"{shlex.join(command)}; echo $? > {shlex.quote(str(self.done))}"
        self.tmux("-f", str(config), "new-session", "-d", "-x", "120", "-y", "40")
        self.tmux("send-keys", "-t", "0", f"clear; {line}", "Enter")

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True
        ).stdout

    def screen(self) -> str:
        """Everything printed so far (wrapped lines joined)."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "0")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "0", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "0", "-l", text)
        self.keys("Enter")

    def wait(self, ready, what: str, seconds: float = 60) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            text = self.screen()
            if ready(text):
                return text
            time.sleep(0.05)
        raise AssertionError(f"no {what} within {seconds} s; the screen:\n{self.screen()}")

    def prompts(self, text: str) -> int:
        return text.count(PROMPT)

    def next_prompt(self, seen: int) -> str:
        """Wait for prompt number ``seen + 1`` or the command's end."""
        return self.wait(lambda t: self.prompts(t) > seen or self.done.exists(), "prompt or end")

    def status(self) -> int:
        self.wait(lambda t: self.done.exists() and self.done.read_text().strip() != "", "exit")
        return int(self.done.read_text())

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False)


@pytest.fixture
def terminal(tmp_path: Path):
    assert shutil.which("tmux"), "tmux is required: apt-get install tmux"
    made: list[Terminal] = []

    def start(*args: str) -> Terminal:
        command = [sys.executable, "-m", "ohseven.referee.cli", "play", *args]
        made.append(Terminal(tmp_path, command))
        return made[-1]

    yield start
    for t in made:
        t.close()


def last_legal(text: str) -> list[str]:
    """The moves of the last legal list on the screen, as typed (cards or bids)."""
    line = [m for m in (LEGAL.match(x.strip()) for x in text.splitlines()) if m][-1].group(1)
    return [word for word in line.split() if not re.fullmatch(r"\d+\)|\(choose|\d+\)", word)]


def test_a_whole_game_typed_in_a_terminal(terminal, tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    t = terminal(
        "--game", "oh-hell", "--rule", "max_hand=2", "--seed", str(2**100 + 7),
        "--seat", "1", "--replays", str(replays), RANDOM_BOT, RANDOM_BOT,
    )  # fmt: skip
    text = t.next_prompt(0)
    assert "Your hand:" in text and "Trump:" in text and "Legal bids:" in text
    assert "you" in text and "random#2" in text
    seen = t.prompts(text)
    t.type("zz")  # not a bid
    text = t.next_prompt(seen)
    assert "Not that: a bid is a number of tricks" in text
    seen = t.prompts(text)
    t.type("9")  # a bid too high for a hand of one card
    text = t.next_prompt(seen)
    assert "Not that: you cannot bid 9 now: you may bid 0, 1" in text
    seen = t.prompts(text)
    t.type("?")
    text = t.next_prompt(seen)
    assert "Answer with a card" in text
    assert text.rstrip().splitlines()[-2].startswith("Legal bids: 0 1")
    moves = 0
    while not t.done.exists():
        seen = t.prompts(text)
        legal = last_legal(text)
        if moves == 1:  # a card by its number in the legal list
            t.type("1")
        else:
            t.type(legal[-1].lower())  # a card or bid as typed, in lower case
        moves += 1
        text = t.next_prompt(seen)
        assert "Not that" not in text.split(PROMPT)[-1], text
    assert t.status() == 0
    text = t.screen()
    assert moves == 5  # hands of 1 and 2 cards: two bids, three cards
    assert "Game over:" in text
    table = text[text.index("bid accuracy") :]
    assert "player" in text[text.rindex("\n", 0, text.index("bid accuracy")) :]
    for name in ("you", "random", "random#2"):
        assert re.search(rf"\b{re.escape(name)}\s.*%", table), table
    replay = json.loads((replays / "play-game000.json").read_text())
    assert replay["seats"][1] == "you" and replay["result"] is not None
    assert len([m for m in replay["moves"] if m[0] == 1]) == moves
    view = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "view", str(replays / "play-game000.json")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert view.returncode == 0, view.stderr


def test_ctrl_c_ends_cleanly_with_the_game_so_far_saved(terminal, tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    t = terminal(
        "--game", "oh-seven", "--seed", str(2**100 + 3), "--replays", str(replays),
        RANDOM_BOT, RANDOM_BOT,
    )  # fmt: skip
    text = t.next_prompt(0)
    assert "Trump: not chosen yet" in text
    seen = t.prompts(text)
    t.type(last_legal(text)[0])  # a bid card
    text = t.next_prompt(seen)
    t.keys("C-c")
    assert t.status() == 0
    text = t.screen()
    assert "Traceback" not in text
    assert "Game 1 stopped (interrupted) in round 1" in text
    replay = json.loads((replays / "play-game000.json").read_text())
    assert replay["result"] is None and replay["seats"][0] == "you"
    assert [0, "bid"] in [m[:2] for m in replay["moves"]]
    asked = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "replay", str(replays / "play-game000.json"),
         "--at", "1", "--bot", RANDOM_BOT],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stdout + asked.stderr


def test_the_end_of_input_leaves_the_table(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "play", "--game", "oh-hell",
         "--rule", "max_hand=1", "--seed", str(2**100), RANDOM_BOT, RANDOM_BOT],
        input="", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "stopped (end of input)" in out.stdout
    assert "Traceback" not in out.stderr

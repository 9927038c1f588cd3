"""Tournament configuration: parsing, defaults, and every mistake reported at once with lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ohseven.referee.plan.config import (
    ConfigError,
    RatingsConfig,
    ScheduleConfig,
    ServerConfig,
    StopRule,
)
from ohseven.referee.plan.digests import changed_keys
from ohseven.referee.plan.loader import DEMO_CONFIG, demo_config, load_config, load_config_text
from ohseven.referee.plan.sections import TOP_KEYS
from ohseven.referee.records import TimeControl

GOOD = """\
name: league
game: oh-hell
rules:
  hook: true
table_size: [4, 3]
bots:
  - name: a
    file: bots/a.py
  - name: b
    command: python3 -u bots/b.py --fast
    limits: {memory_mb: 512}
  - name: c
    file: bots/a.py
    args: [--budget, 0.5]
  - name: d
    command: [bots/run.sh, x]
schedule: {type: round-robin, repeats: 2, games_per_table: 3}
time_control: {move_seconds: 0.5, bank_seconds: 5}
sandbox: {mode: unsandboxed, memory_mb: 256}
seed: 42
replays: true
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "a.py").write_text("print('a')\n")
    (tmp_path / "bots" / "b.py").write_text("print('b')\n")
    script = tmp_path / "bots" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return tmp_path


def load(folder: Path, text: str):
    path = folder / "t.yaml"
    path.write_text(text)
    return load_config(path)


def errors_of(folder: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(folder, text)
    return caught.value.errors


class TestValid:
    def test_every_key_is_read(self, folder: Path) -> None:
        """A full config becomes the values it states, paths resolved from the config's folder."""
        config = load(folder, GOOD)
        assert config.name == "league" and config.game == "oh-hell"
        assert config.rules["hook"] is True
        assert config.table_sizes == (3, 4)
        assert config.bot_names == ("a", "b", "c", "d")
        assert config.bots[0].spec.command == (sys.executable, str(folder / "bots" / "a.py"))
        assert config.bots[0].spec.directory == str(folder / "bots")
        script = str(folder / "bots" / "b.py")  # relative to the config, wherever we run from
        assert config.bots[1].spec.command == ("python3", "-u", script, "--fast")
        assert config.bots[1].limits == (("memory_mb", 512),)
        assert config.bots[1].spec.limits == (("memory_mb", 512),)  # reaches the match
        assert config.bots[2].spec.command[-3:] == (
            str(folder / "bots" / "a.py"),
            "--budget",
            "0.5",
        )
        assert config.bots[3].spec.command == (str(folder / "bots" / "run.sh"), "x")
        assert config.schedule.repeats == 2 and config.schedule.games_per_table == 3
        assert config.time_control == TimeControl(0.5, 5.0, TimeControl().start_seconds)
        assert config.sandbox.mode == "unsandboxed"
        assert config.sandbox.limits == (("memory_mb", 256),)
        assert config.seed == 42 and config.replays is True
        assert config.output == str(folder / "out" / "league")

    def test_defaults(self, folder: Path) -> None:
        """Omitted keys take their documented defaults."""
        config = load(
            folder,
            "name: x\ngame: oh-seven\ntable_size: 2\nbots:\n"
            "  - {name: a, file: bots/a.py}\n  - {name: b, file: bots/b.py}\n",
        )
        assert config.workers == (os.cpu_count() or 1)
        assert config.schedule.type == "round-robin" and config.schedule.repeats == 1
        assert config.time_control == TimeControl()
        assert config.sandbox.mode == "bwrap" and config.seed is None and not config.replays
        assert config.schedule.deals == "independent" and not config.reveal_seeds
        assert config.ratings.fault_ranks_last is True

    def test_cpus_and_ponder(self, folder: Path) -> None:
        """``cpus`` is a number (a fraction of a core too), ``ponder`` a boolean for the sandbox
        and per bot; both reach the sandbox of the match."""
        from ohseven.referee.plan.run_plan import sandbox_config

        config = load(
            folder,
            "name: x\ngame: oh-seven\ntable_size: 2\nsandbox: {cpus: 0.5, ponder: true}\n"
            "bots:\n  - {name: a, file: bots/a.py, ponder: false, limits: {cpus: 2}}\n"
            "  - {name: b, file: bots/b.py}\n",
        )
        assert config.sandbox.ponder is True and config.sandbox.limits == (("cpus", 0.5),)
        sandbox = sandbox_config(config)
        assert sandbox.ponder is True and sandbox.limits.cpus == 0.5
        assert config.bots[0].spec.ponder is False and config.bots[0].limits == (("cpus", 2),)
        assert config.bots[1].spec.ponder is None
        default = load(
            folder,
            "name: x\ngame: oh-seven\ntable_size: 2\nbots:\n"
            "  - {name: a, file: bots/a.py}\n  - {name: b, file: bots/b.py}\n",
        )
        assert default.sandbox.ponder is False and sandbox_config(default).limits.cpus == 1.0

    def test_bad_cpus_and_ponder(self, folder: Path) -> None:
        """A non-positive ``cpus`` or a non-boolean ``ponder`` is a clear error each."""
        errors = errors_of(
            folder,
            "name: x\ngame: oh-seven\ntable_size: 2\nsandbox: {cpus: 0, ponder: maybe}\n"
            "bots:\n  - {name: a, file: bots/a.py, ponder: 1}\n  - {name: b, file: bots/b.py}\n",
        )
        assert any("key `sandbox.cpus`: expected a positive number" in e for e in errors)
        assert any("key `sandbox.ponder`: expected true or false" in e for e in errors)
        assert any("key `bots[0].ponder`: expected true or false" in e for e in errors)

    def test_digest_ignores_workers_and_output(self, folder: Path) -> None:
        """The digest changes with what decides results, not with workers, output or the seed
        (checked apart by the store, so that a published digest cannot be searched for it)."""
        base = load(folder, GOOD).digest
        assert load(folder, GOOD + "workers: 3\noutput: elsewhere\n").digest == base
        assert load(folder, GOOD.replace("seed: 42", "seed: 43")).digest == base
        assert load(folder, GOOD + "reveal_seeds: true\n").digest == base
        duplicate = GOOD.replace("games_per_table: 3}", "games_per_table: 3, deals: duplicate}")
        assert load(folder, duplicate).digest != base
        (folder / "bots" / "a.py").write_text("print('changed')\n")
        assert load(folder, GOOD).digest != base

    def test_demo_config_uses_the_installed_example_bots(self, tmp_path: Path) -> None:
        """The embedded quickstart validates and runs the example bots of the package."""
        config = demo_config(tmp_path)
        assert config.name == "quickstart"
        assert all(Path(bot.spec.command[1]).is_file() for bot in config.bots)
        assert config.output == str(tmp_path / "out" / "quickstart")

    def test_shipped_quickstart_matches_the_embedded_demo(self) -> None:
        """tournaments/quickstart.yaml is the embedded demo (same tournament digest inputs)."""
        shipped = Path(__file__).parent.parent / "tournaments" / "quickstart.yaml"
        config = load_config(shipped)
        demo = demo_config()
        assert config.schedule == demo.schedule and config.rules == demo.rules
        assert config.bot_names == demo.bot_names
        assert [Path(b.spec.command[1]).name for b in config.bots] == [
            Path(b.spec.command[1]).name for b in demo.bots
        ]
        assert [b.spec.command[2:] for b in config.bots] == [b.spec.command[2:] for b in demo.bots]
        assert config.time_control == demo.time_control and config.seed == demo.seed
        assert "name: quickstart" in DEMO_CONFIG

    @pytest.mark.parametrize("name", ["quickstart", "oh-hell", "gauntlet", "league"])
    def test_shipped_tournaments_are_valid(self, name: str) -> None:
        """Every tournament shipped in tournaments/ validates."""
        load_config(Path(__file__).parent.parent / "tournaments" / f"{name}.yaml")


class TestErrors:
    def test_all_errors_at_once_with_lines_and_keys(self, folder: Path) -> None:
        """Several mistakes: each reported, in file order, as file:line: key `path`: message."""
        text = (
            "name: x\n"  # 1
            "game: oh-seven\n"  # 2
            "rules: {passing: maybe}\n"  # 3
            "table_size: 3\n"  # 4
            "bots:\n"  # 5
            "  - {name: a, file: bots/a.py}\n"  # 6
            "  - {name: a, file: bots/nope.py}\n"  # 7
            "  - {name: c, command: 7}\n"  # 8
            "schedule: {type: swiss}\n"  # 9
            "colour: red\n"  # 10
        )
        errors = errors_of(folder, text)
        source = str(folder / "t.yaml")
        expected = [
            (3, "rules.passing", "expected true or false"),
            (7, "bots[1].file", "no such file"),
            (7, "bots[1].name", "duplicate bot name"),
            (8, "bots[2].command", "expected a command line"),
            (9, "schedule.type", "expected one of round-robin, gauntlet"),
            (10, "colour", "unknown key"),
        ]
        assert len(errors) == len(expected), errors
        for error, (line, key, message) in zip(errors, expected, strict=True):
            assert error.startswith(f"{source}:{line}: key `{key}`: "), error
            assert message in error

    def test_table_size_outside_the_game_and_the_pool(self, folder: Path) -> None:
        """Tables larger than the pool, or outside the game's player range, are refused."""
        text = "name: x\ngame: oh-hell\ntable_size: [2, 3]\nbots:\n  - {name: a, file: bots/a.py}\n"
        errors = errors_of(folder, text)
        assert any("oh-hell is played by 3 to 7 players, not 2" in e for e in errors)
        assert any("a table of 3 needs 3 bots; there are 1" in e for e in errors)

    def test_gauntlet_needs_known_candidates_and_a_field(self, folder: Path) -> None:
        """Gauntlet candidates must be bots, and the field must fill a table."""
        text = (
            "name: x\ngame: oh-seven\ntable_size: 3\nschedule: {type: gauntlet, candidates: "
            "[a, zz]}\nbots:\n  - {name: a, file: bots/a.py}\n  - {name: b, file: bots/b.py}\n"
        )
        errors = errors_of(folder, text)
        assert any("key `schedule.candidates[1]`: no bot named 'zz'" in e for e in errors)
        assert any("needs 2 field bots" in e for e in errors)

    def test_missing_required_keys(self, folder: Path) -> None:
        """name, game, table_size and bots are required."""
        errors = errors_of(folder, "seed: 1\n")
        for key in ("name", "game", "table_size", "bots"):
            assert any(f"missing key `{key}`" in e for e in errors), errors

    def test_invalid_yaml_names_the_line(self, folder: Path) -> None:
        """A YAML syntax error is a ConfigError with its line, not a traceback."""
        errors = errors_of(folder, "name: x\nbots: [\n  - a\n")
        assert len(errors) == 1 and "not valid YAML" in errors[0]

    def test_unreadable_file(self, tmp_path: Path) -> None:
        """A missing config file is a ConfigError naming it."""
        with pytest.raises(ConfigError, match="cannot read"):
            load_config(tmp_path / "none.yaml")

    def test_config_error_is_a_value_error(self) -> None:
        """ConfigError refines ValueError; its message counts and lists the errors."""
        with pytest.raises(ValueError, match="5 errors") as caught:
            load_config_text("seed: -1\n", source="s.yaml")
        assert isinstance(caught.value, ConfigError)
        assert "s.yaml:1: key `seed`: expected an integer >= 0" in str(caught.value)

    @pytest.mark.slow
    def test_a_misspelt_key_is_reported_once_with_the_key_it_resembles(self, folder: Path) -> None:
        """`tourney --check`: each misspelt key is one error naming the key it resembles (the
        sandbox's keys were reported twice; a misspelt required key was also "missing")."""
        path = folder / "t.yaml"
        path.write_text(
            MINIMAL.replace("table_size: 2", "table_size: 2\nsandbox: {pondr: true}")
            + "schedule: {type: gauntlet, candidates: [a], repeats: 2, stop: {margn: 1}}\n"
        )
        done = subprocess.run(
            [sys.executable, "-m", "ohseven.referee.cli", "tourney", str(path), "--check"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        errors = [line.strip() for line in done.stderr.splitlines() if line.startswith("  ")]
        assert errors == [
            f"{path}:4: key `sandbox.pondr`: unknown key (did you mean `ponder`?); expected one "
            "of mode, ponder, extra_paths, memory_mb, cpu_seconds, processes, file_size_mb, "
            "open_files, log_bytes, scratch_mb, cpus",
            f"{path}:8: key `schedule.stop.margn`: unknown key (did you mean `margin`?); "
            "expected one of confidence, margin, min_games",
        ]

    @given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers(), max_size=4))
    def test_unknown_top_keys_are_always_reported(self, extra: dict) -> None:
        """Any unknown top-level key is reported with its own name and line."""
        known = set(TOP_KEYS)
        extra = {k: v for k, v in extra.items() if k.isidentifier() and k not in known}
        text = "name: x\ngame: oh-seven\ntable_size: 2\n" + "".join(
            f"{key}: {value}\n" for key, value in extra.items()
        )
        try:
            load_config_text(text, source="h.yaml")
        except ConfigError as error:
            for line, key in enumerate(extra, start=4):
                assert f"h.yaml:{line}: key `{key}`: unknown key" in str(error)
        else:
            pytest.fail("a config without bots was accepted")


MINIMAL = (
    "name: x\ngame: oh-seven\ntable_size: 2\nbots:\n"
    "  - {name: a, file: bots/a.py}\n  - {name: b, file: bots/b.py}\n"
)


class TestPlayableBounds:
    """A configuration that validates can be played: no overflow, no endless schedule."""

    @pytest.mark.parametrize(
        ("extra", "key"),
        [
            ("time_control: {move_seconds: .inf}\n", "time_control.move_seconds"),
            ("time_control: {move_seconds: 1.0e+300}\n", "time_control.move_seconds"),
            ("time_control: {bank_seconds: 1.0e+300}\n", "time_control.bank_seconds"),
            ("time_control: {start_seconds: .nan}\n", "time_control.start_seconds"),
            ("schedule: {repeats: 1000000000}\n", "schedule.repeats"),
            ("schedule: {games_per_table: 1000000000}\n", "schedule.games_per_table"),
            ("schedule: {repeats: 9000, games_per_table: 9000}\n", "schedule"),
            ("workers: 100000\n", "workers"),  # each a process: it used to hang the run
        ],
    )
    def test_out_of_range_values_are_errors(self, folder: Path, extra: str, key: str) -> None:
        """Infinite or huge clocks and schedules are refused at their key."""
        errors = errors_of(folder, MINIMAL + extra)
        assert len(errors) == 1 and f"key `{key}`" in errors[0], errors

    def test_an_alias_bomb_is_refused_at_once(self, folder: Path) -> None:
        """A 9x9 YAML alias bomb is an error about aliases, not a hang."""
        bomb = "a: &a [1,1,1,1,1,1,1,1,1]\n" + "".join(
            f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
            for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
        )
        errors = errors_of(folder, MINIMAL + bomb)
        assert any("aliases" in error for error in errors)

    def test_an_output_that_is_a_file_is_an_error(self, folder: Path) -> None:
        """`output:` naming an existing file: an error at the key, not a FileExistsError."""
        (folder / "taken").write_text("x")
        errors = errors_of(folder, MINIMAL + "output: taken\n")
        assert len(errors) == 1 and "key `output`" in errors[0] and "not a folder" in errors[0]

    def test_command_paths_do_not_depend_on_the_working_directory(
        self, folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Every word of `command` naming a file next to the config is made absolute, and a
        `.py` script given with arguments runs with the referee's Python."""
        monkeypatch.chdir("/")
        config = load(
            folder,
            MINIMAL.replace("file: bots/b.py", 'command: "bots/b.py --trace out.txt"'),
        )
        assert config.bots[1].spec.command == (
            sys.executable,
            str(folder / "bots" / "b.py"),
            "--trace",
            "out.txt",
        )


class TestExtraPaths:
    BASE = (
        "name: x\ngame: oh-seven\ntable_size: 3\nbots:\n  - {name: a, file: bots/a.py}\n"
        "  - {name: b, file: bots/b.py}\n  - {name: c, file: bots/b.py}\n"
    )

    def test_accepted_and_passed_to_the_sandbox(self, folder: Path, tmp_path_factory) -> None:
        """`sandbox.extra_paths` lists absolute folders that reach the bots' SandboxConfig."""
        from ohseven.referee.plan.run_plan import sandbox_config

        lib = tmp_path_factory.mktemp("jdk")
        config = load(folder, self.BASE + f"sandbox: {{extra_paths: [{lib}]}}\n")
        assert config.sandbox.extra_paths == (str(lib),)
        assert sandbox_config(config).extra_paths == (str(lib),)

    @pytest.mark.parametrize(
        ("paths", "message"),
        [
            ("[relative/lib]", "not an absolute path"),
            ("[/no/such/folder]", "does not exist"),
            ("[/]", "whole file system"),
            ("[{folder}/bots]", "the folder of bot a"),
            ("[{folder}]", "would show every bot"),
            ("[{folder}/out/x]", "the output folder"),
            ("/usr/lib", "a list of absolute paths"),
        ],
    )
    def test_bad_paths_are_errors_at_their_key(self, folder: Path, paths, message) -> None:
        """A relative, missing or root path, or one showing a bot's or the output folder, is an
        error naming `sandbox.extra_paths`."""
        (folder / "out" / "x").mkdir(parents=True)
        text = self.BASE + "output: out/x\n" + "sandbox: {extra_paths: " + paths + "}\n"
        errors = errors_of(folder, text.replace("{folder}", str(folder)))
        assert len(errors) == 1 and "sandbox.extra_paths" in errors[0], errors
        assert message in errors[0]


class TestLeague:
    """``schedule: {type: league, games: N}``: its keys, and a digest without its bots."""

    def test_a_league_reads_its_budget(self, folder: Path) -> None:
        """The budget of games is read; other schedules keep 0."""
        config = load(folder, MINIMAL + "schedule: {type: league, games: 500, deals: duplicate}\n")
        assert (config.schedule.type, config.schedule.games) == ("league", 500)
        assert config.schedule.deals == "duplicate" and load(folder, MINIMAL).schedule.games == 0

    @pytest.mark.parametrize(
        ("schedule", "key", "text"),
        [
            ("{type: league}", "schedule", "needs `games`"),
            ("{type: league, games: 0}", "schedule.games", "an integer from 1"),
            ("{type: league, games: 1}", "schedule.games", "less than one table"),
            ("{type: league, games: 10, repeats: 2}", "schedule.repeats", "no repeats"),
            ("{type: round-robin, games: 10}", "schedule.games", "only a league"),
            ("{type: league, games: 10, candidates: [a]}", "schedule.candidates", "gauntlet"),
        ],
    )
    def test_league_mistakes_name_their_key(
        self, folder: Path, schedule: str, key: str, text: str
    ) -> None:
        """A league without a budget, with repeats or candidates; a budget elsewhere."""
        errors = errors_of(folder, MINIMAL + f"schedule: {schedule}\n")
        assert len(errors) == 1 and f"key `{key}`" in errors[0] and text in errors[0], errors

    def test_the_league_digest_leaves_out_the_bots_and_the_budget(self, folder: Path) -> None:
        """Bots and budget may change under the same digest; a rule may not, and the change is
        named; a round-robin's digest still covers its bots."""
        base = MINIMAL + "schedule: {type: league, games: 50}\n"
        league = load(folder, base)
        more = base.replace("games: 50", "games: 90").replace(
            "bots:\n", "bots:\n  - {name: z, file: bots/b.py}\n"
        )
        assert load(folder, more).digest == league.digest
        ruled = load(folder, base + "rules: {passing: true}\n")
        assert ruled.digest != league.digest
        assert changed_keys(league.document, ruled.document) == [("rules.passing", None, True)]
        robin = load(folder, MINIMAL)
        grown = MINIMAL.replace("bots:\n", "bots:\n  - {name: z, file: bots/b.py}\n")
        assert load(folder, grown).digest != robin.digest


class TestStopRule:
    """``schedule.stop`` of a gauntlet: its keys, their bounds, and where it may not be."""

    def text(self, stop: str, repeats: int = 5) -> str:
        schedule = f"{{type: gauntlet, candidates: [a], repeats: {repeats}, {stop}}}"
        return MINIMAL + f"schedule: {schedule}\n"

    def test_the_rule_is_read_with_its_defaults(self, folder: Path) -> None:
        """The given keys are read; confidence and min_games have defaults; no rule: None."""
        config = load(folder, self.text("stop: {margin: 2.5}"))
        assert config.schedule.stop == StopRule(confidence=0.95, margin=2.5, min_games=30)
        full = load(folder, self.text("stop: {margin: 1, confidence: 0.99, min_games: 12}"))
        assert full.schedule.stop == StopRule(confidence=0.99, margin=1.0, min_games=12)
        assert load(folder, self.text("deals: independent")).schedule.stop is None

    def test_the_rule_is_in_the_digest(self, folder: Path) -> None:
        """Another rule plays other games: another digest."""
        one = load(folder, self.text("stop: {margin: 2}"))
        assert load(folder, self.text("stop: {margin: 3}")).digest != one.digest
        assert load(folder, self.text("deals: independent")).digest != one.digest

    @pytest.mark.parametrize(
        ("stop", "key", "message"),
        [
            ("stop: {confidence: 0.9}", "schedule.stop", "missing key `margin`"),
            ("stop: {margin: 0}", "schedule.stop.margin", "a positive number of points"),
            ("stop: {margin: .inf}", "schedule.stop.margin", "at most 1000"),
            ("stop: {margin: 2, confidence: 0.5}", "schedule.stop.confidence", "above 0.5"),
            ("stop: {margin: 2, confidence: 1}", "schedule.stop.confidence", "at most 0.9999"),
            ("stop: {margin: 2, confidence: yes}", "schedule.stop.confidence", "a probability"),
            ("stop: {margin: 2, min_games: 1}", "schedule.stop.min_games", "from 2"),
            ("stop: {margin: 2, min_games: 2.5}", "schedule.stop.min_games", "an integer"),
            ("stop: {margin: 2, alpha: 0.1}", "schedule.stop.alpha", "unknown key"),
            ("stop: 0.95", "schedule.stop", "expected a mapping"),
        ],
    )
    def test_mistakes_name_their_key(self, folder: Path, stop: str, key: str, message: str) -> None:
        """Each bad value of the rule is one error at its own key, saying what is expected."""
        errors = errors_of(folder, self.text(stop))
        assert len(errors) == 1 and f"key `{key}`" in errors[0] and message in errors[0], errors

    def test_one_repeat_cannot_stop(self, folder: Path) -> None:
        """With one repeat a candidate could never stop: refused, saying to raise repeats."""
        errors = errors_of(folder, self.text("stop: {margin: 2}", repeats=1))
        assert len(errors) == 1 and "key `schedule.stop`" in errors[0], errors
        assert "raise `schedule.repeats`" in errors[0]

    @pytest.mark.parametrize(
        "schedule", ["{type: round-robin, repeats: 3", "{type: league, games: 9"]
    )
    def test_only_a_gauntlet_stops(self, folder: Path, schedule: str) -> None:
        """A stopping rule in a round-robin or a league is refused at its key."""
        errors = errors_of(folder, MINIMAL + f"schedule: {schedule}, stop: {{margin: 2}}}}\n")
        assert len(errors) == 1 and "key `schedule.stop`: only a gauntlet" in errors[0], errors


class TestTrust:
    """What makes a configuration fit for trusted bots only: named for a server to refuse."""

    def test_the_default_is_fit_for_anyone(self, tmp_path):
        (tmp_path / "b.py").write_text("")
        text = "name: t\ngame: oh-seven\ntable_size: 2\nbots:\n"
        text += "  - {name: a, file: b.py}\n  - {name: b, file: b.py, author: x}\n"
        config = load_config_text(text, base_dir=tmp_path)
        assert config.for_trusted_bots == ()
        assert [bot.author for bot in config.bots] == [None, "x"]
        duplicate = load_config_text(
            text + "schedule: {deals: duplicate}\nsandbox: {mode: unsandboxed}\n",
            base_dir=tmp_path,
        )
        (mode, deals) = duplicate.for_trusted_bots
        assert mode.startswith("<config>:8: key `sandbox.mode`: unsandboxed"), mode
        assert deals.startswith("<config>:7: key `schedule.deals`: duplicate"), deals
        assert "page cache" in deals

    def test_pondering_is_for_trusted_bots(self, tmp_path):
        """``ponder: true``, for the sandbox or for one bot, lets bots run beside each other
        (the CPU contention channel): named with its line, for a server to refuse."""
        (tmp_path / "b.py").write_text("")
        text = "name: t\ngame: oh-seven\ntable_size: 2\nbots:\n  - {name: a, file: b.py}\n"
        text += "  - name: b\n    file: b.py\n    ponder: true\n"
        (bot,) = load_config_text(text, base_dir=tmp_path).for_trusted_bots
        assert bot.startswith("<config>:8: key `bots[1].ponder`: ponder lets"), bot
        whole = load_config_text(text + "sandbox: {ponder: true}\n", base_dir=tmp_path)
        assert [reason.split(": key")[0] for reason in whole.for_trusted_bots] == [
            "<config>:9",
            "<config>:8",
        ]
        off = load_config_text(text.replace("ponder: true", "ponder: false"), base_dir=tmp_path)
        assert off.for_trusted_bots == ()


CONFIG_DOC = Path(__file__).resolve().parent.parent / "docs" / "CONFIG.md"


def _documented_rows(heading: str) -> dict[str, list[str]]:
    """The table under ``heading`` in docs/CONFIG.md: each key with its row's other cells."""
    lines = CONFIG_DOC.read_text().splitlines()
    start = lines.index(heading) + 1
    rows: dict[str, list[str]] = {}
    for line in lines[start:]:
        if line.startswith("#"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def _documented_default(cell: str) -> object:
    """A default cell as a value: ``20971520 (20 MiB)`` -> 20971520, ``true`` -> True."""
    word = cell.strip("`").split(" ")[0]
    if word in ("true", "false"):
        return word == "true"
    try:
        return int(word)
    except ValueError:
        try:
            return float(word)
        except ValueError:
            return word


class TestDocumentedKeys:
    """docs/CONFIG.md's tables name exactly the keys the loader knows, with their defaults."""

    def test_top_level_keys(self):
        assert set(_documented_rows("## Keys")) == set(TOP_KEYS)

    @pytest.mark.parametrize(
        ("heading", "cls"),
        [("### `server`", ServerConfig), ("### `time_control`", TimeControl)],
    )
    def test_section_keys_and_defaults(self, heading, cls):
        rows = _documented_rows(heading)
        fields = {field.name: field.default for field in attrs.fields(cls)}
        assert set(rows) == set(fields)
        for key, cells in rows.items():
            assert _documented_default(cells[1]) == fields[key], key

    @pytest.mark.parametrize(
        ("heading", "cls"),
        [
            ("### `schedule`", ScheduleConfig),
            ("### Stopping a gauntlet's candidates", StopRule),
            ("### `ratings`", RatingsConfig),
        ],
    )
    def test_section_keys(self, heading, cls):
        """Sections whose defaults are words (required, none, per game): the keys alone."""
        assert set(_documented_rows(heading)) == {field.name for field in attrs.fields(cls)}

"""Staging: every bot runs from a private copy of its own files. The planning rules, the
copies themselves, and real hostile bots in the real sandbox trying to read what is not
theirs in a ``tourney`` run, in ``match`` and in ``check-bot``."""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from ohseven.referee.files import DB_NAME, STAGING_NAME
from ohseven.referee.plan.config import ConfigError
from ohseven.referee.plan.loader import load_config
from ohseven.referee.records import BotSpec
from ohseven.referee.results.store import Store
from ohseven.referee.sandbox.staging import (
    STAGE_LIMIT_BYTES,
    Plan,
    StageLimits,
    StagingError,
    plan_bots,
    stage,
    staged_bots,
    tree_digest,
)
from ohseven.referee.tournament.run import TourneyError, run_tournament

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

PROBE = os.path.join(os.path.dirname(__file__), "bots", "sandbox_probe.py")
HOSTILE = os.path.join(os.path.dirname(__file__), "bots", "hostile_bot.py")
STRANGER = 54321  # the uid of a competitor's folder: no account, not the referee
REFEREE = [sys.executable, "-m", "ohseven.referee.cli"]  # this interpreter's, wherever PATH points
PY = sys.executable

OTHER_BOT = "from ohseven.sdk import Bot, run\n# the secret strategy of other\nrun(Bot)\n"
THIRD_BOT = (
    "import os\nfrom ohseven.sdk import Bot, run\n"
    "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'weights.txt')).read()\n"
    "run(Bot)\n"
)


def spec(name: str, *files: Path, directory: Path | None = None) -> BotSpec:
    return BotSpec(name, (PY, *map(str, files)), str(directory) if directory else None)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of bots side by side: probe, other, and third with a directory of its own."""
    bots = tmp_path / "bots"
    (bots / "third").mkdir(parents=True)
    shutil.copy(PROBE, bots / "sandbox_probe.py")
    (bots / "other_bot.py").write_text(OTHER_BOT)
    (bots / "third" / "third_bot.py").write_text(THIRD_BOT)
    (bots / "third" / "weights.txt").write_text("the weights of third")
    return bots


def write_config(folder: Path, probe_args: list[str], **extra: object) -> Path:
    config = {
        "name": "spied",
        "game": "oh-seven",
        "table_size": 2,
        "bots": [
            {"name": "probe", "file": "sandbox_probe.py", "args": probe_args},
            {"name": "other", "file": "other_bot.py"},
            {"name": "third", "file": "third/third_bot.py", "directory": "third"},
        ],
        "schedule": {"type": "round-robin", "games_per_table": 1},
        "time_control": {"move_seconds": 2.0, "bank_seconds": 10.0, "start_seconds": 20.0},
        "sandbox": {"mode": "bwrap"},
        "output": "out",
        "seed": 3,
        "replays": True,
        **extra,
    }
    path = folder / "tourney.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def forbidden(folder: Path) -> list[str]:
    """What the probe must not read: another bot's files, the configuration, the output."""
    out = folder / "out"
    return [
        str(folder / "other_bot.py"),
        str(folder / "third" / "weights.txt"),
        str(folder / "third"),
        str(folder / "tourney.yaml"),
        str(out / DB_NAME),
        str(out / "leaderboard.json"),
        str(out / "replays"),
        str(out / STAGING_NAME),
        str(out / STAGING_NAME / "key"),
        str(out),
    ]


def probe_lines(text: str, word: str) -> list[str]:
    prefix = f"RESULT {word} "
    return [line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix)]


class TestPlans:
    def test_shared_folder_gives_only_own_files(self, folder):
        """Bots side by side in one folder each get their own file, nothing else of it."""
        probe, other = plan_bots(
            [spec("probe", folder / "sandbox_probe.py"), spec("other", folder / "other_bot.py")]
        )
        assert probe.files == ("sandbox_probe.py",) and other.files == ("other_bot.py",)

    def test_own_directory_copied_whole(self, folder):
        """A bot alone in its folder gets the whole folder (its modules, its data)."""
        (plan,) = plan_bots([spec("third", folder / "third" / "third_bot.py")])
        assert plan.files is None and plan.excluded == ()
        assert plan.source == str((folder / "third").resolve())

    def test_explicit_directory_leaves_out_other_bots(self, folder):
        """A directory holding other bots' files and folders is copied without them."""
        (folder / "team").mkdir()
        (folder / "team" / "team_bot.py").write_text(OTHER_BOT)
        plans = plan_bots(
            [
                spec("team", folder / "team" / "team_bot.py", directory=folder),
                spec("other", folder / "other_bot.py"),
                spec("third", folder / "third" / "third_bot.py", directory=folder / "third"),
            ]
        )
        real = folder.resolve()
        assert plans[0].files is None
        assert plans[0].excluded == (str(real / "other_bot.py"), str(real / "third"))

    def test_clones_share_their_file(self, folder):
        """Two entries of the same program (random, random-2) both keep that file."""
        plans = plan_bots([spec("a", folder / "other_bot.py"), spec("b", folder / "other_bot.py")])
        assert all(plan.files is None or "other_bot.py" in plan.files for plan in plans)

    def test_private_paths_left_out(self, folder):
        """The configuration and the output folder inside a bot's folder are not copied."""
        (folder / "third" / "out").mkdir()
        (plan,) = plan_bots(
            [spec("third", folder / "third" / "third_bot.py")],
            private={"the output folder": str(folder / "third" / "out")},
        )
        assert plan.excluded == (str((folder / "third" / "out").resolve()),)

    def test_bot_inside_output_refused(self, folder):
        """A bot whose folder lies inside a private path is an error naming both."""
        with pytest.raises(StagingError, match="inside the output folder"):
            plan_bots(
                [spec("third", folder / "third" / "third_bot.py")],
                private={"the output folder": str(folder)},
            )

    def test_command_without_files_has_no_copy(self):
        """A command found on PATH has no directory to stage."""
        assert plan_bots([BotSpec("cat", ("cat",))]) == [None]


class TestCopies:
    def test_copy_holds_only_the_plan(self, folder, tmp_path):
        """The staged bot's command and directory point into a copy of its own files."""
        (probe, other) = stage(
            [spec("probe", folder / "sandbox_probe.py"), spec("other", folder / "other_bot.py")],
            str(tmp_path / "stage"),
        )
        assert os.listdir(probe.directory) == ["sandbox_probe.py"]
        assert probe.command == (PY, os.path.join(probe.directory, "sandbox_probe.py"))
        assert Path(other.command[1]).read_text() == OTHER_BOT

    def test_root_is_private_and_copies_readable(self, folder, tmp_path):
        """The staging root is 0711 (no listing), the key 0600, each copy world-readable."""
        root = tmp_path / "stage"
        (bot,) = stage([spec("third", folder / "third" / "third_bot.py")], str(root), keep=True)
        assert stat.S_IMODE(root.stat().st_mode) == 0o711
        assert stat.S_IMODE((root / "key").stat().st_mode) == 0o600
        assert stat.S_IMODE(Path(bot.directory).stat().st_mode) == 0o755
        assert stat.S_IMODE((Path(bot.directory) / "weights.txt").stat().st_mode) == 0o644

    def test_kept_copies_reused_and_stale_removed(self, folder, tmp_path):
        """With ``keep`` the same content gets the same path again; others are removed."""
        root = str(tmp_path / "stage")
        bots = [spec("third", folder / "third" / "third_bot.py")]
        first = stage(bots, root, keep=True)
        again = stage(bots, root, keep=True)
        assert first == again
        (folder / "third" / "weights.txt").write_text("new weights")
        changed = stage(bots, root, keep=True)
        assert changed[0].directory != first[0].directory
        assert not os.path.exists(first[0].directory)

    def test_clones_share_one_copy(self, folder, tmp_path):
        """Bots of one command and folder (a league's clones) run from one read-only copy;
        a bot of other files gets its own."""
        clones = [spec(f"clone{i}", folder / "third" / "third_bot.py") for i in range(3)]
        staged = stage([*clones, spec("other", folder / "other_bot.py")], str(tmp_path / "s"))
        assert len({bot.directory for bot in staged[:3]}) == 1
        assert staged[3].directory != staged[0].directory
        assert [bot.name for bot in staged] == ["clone0", "clone1", "clone2", "other"]
        assert sorted(os.listdir(tmp_path / "s")) == sorted(
            {os.path.basename(os.path.dirname(b.directory)) for b in staged}
        )

    def test_a_clone_with_other_expected_files_is_refused(self, folder, tmp_path):
        """Sharing a copy still checks every bot's expected digest."""
        clones = [spec(f"clone{i}", folder / "third" / "third_bot.py") for i in range(2)]
        digest = tree_digest(plan_bots(clones)[0])
        with pytest.raises(StagingError, match="'clone1'.*changed since"):
            stage(clones, str(tmp_path / "s"), expected={"clone0": digest, "clone1": "x"})

    def test_changed_files_refused(self, folder, tmp_path):
        """A copy whose content differs from the digest expected is an error."""
        bots = [spec("third", folder / "third" / "third_bot.py")]
        digest = tree_digest(plan_bots(bots)[0])
        (folder / "third" / "weights.txt").write_text("changed")
        with pytest.raises(StagingError, match="changed since"):
            stage(bots, str(tmp_path / "stage"), expected={"third": digest})

    def test_digest_covers_content_names_and_modes(self, folder):
        """The digest changes with a file's content, a new file, an executable bit."""
        plan = Plan("third", str(folder / "third"))
        seen = {tree_digest(plan)}
        (folder / "third" / "weights.txt").write_text("other weights")
        seen.add(tree_digest(plan))
        (folder / "third" / "extra").write_text("")
        seen.add(tree_digest(plan))
        os.chmod(folder / "third" / "extra", 0o755)
        seen.add(tree_digest(plan))
        assert len(seen) == 4

    def test_temporary_copies_removed(self, folder):
        """``staged_bots`` removes its copies when the run ends."""
        with staged_bots([spec("third", folder / "third" / "third_bot.py")]) as (bot,):
            assert os.path.isfile(os.path.join(bot.directory, "weights.txt"))
        assert not os.path.exists(bot.directory)


class TestConfigDigest:
    def test_side_file_changes_the_digest(self, folder):
        """The configuration's digest covers the whole staged folder, not just the bot file."""
        path = write_config(folder, ["spy", "log"])
        before = load_config(path).digest
        (folder / "third" / "weights.txt").write_text("retrained")
        assert load_config(path).digest != before

    def test_bot_inside_output_is_a_config_error(self, folder):
        """A bot folder inside the output folder is reported with the bot's key."""
        path = write_config(folder, ["spy", "log"], output="third/..")
        with pytest.raises(ConfigError, match=r"key `bots\[0\]`.*output folder"):
            load_config(path)


class TestTourney:
    def test_probe_reads_nothing_of_others(self, folder):
        """In a real tournament, a probe next to the other bots, the configuration and the
        output folder reads none of them, and the other bots still play from their copies."""
        config = load_config(write_config(folder, ["spy", "log", *forbidden(folder)]))
        outcome = run_tournament(config, workers=1)
        assert outcome.complete and not outcome.failed
        with Store.open(folder / "out", create=False) as store:
            logs = [store.logs(index).get("probe", "") for index in store.match_status()]
            faults = store.faults_by_status()
        probe_logs = [text for text in logs if text]
        assert len(probe_logs) == 2
        out = folder / "out"
        for text in probe_logs:
            assert probe_lines(text, "saw") == [], text
            # only the empty folders the sandbox makes to hold the probe's own copy
            listed = dict(line.split(" ", 1) for line in probe_lines(text, "listed"))
            assert set(listed) <= {str(out), str(out / STAGING_NAME)}, text
            assert listed.get(str(out), STAGING_NAME) == STAGING_NAME, text
            assert len(listed.get(str(out / STAGING_NAME), "").split(",")) == 1, text
            hidden = len(probe_lines(text, "hidden"))
            assert hidden + len(listed) == len(forbidden(folder)), text
            assert probe_lines(text, "cwd") == ["sandbox_probe.py"], text
        assert not any(faults.values()), faults

    def test_resume_runs_the_same_copies(self, folder):
        """A second run finds the same staged paths; changed files are refused before play."""
        config = load_config(write_config(folder, ["spy", "log"]))
        run_tournament(config, workers=1)
        staging = folder / "out" / STAGING_NAME
        first = sorted(os.listdir(staging))
        run_tournament(config, workers=1, fresh=True)
        assert sorted(os.listdir(staging)) == first
        (folder / "other_bot.py").write_text(OTHER_BOT + "# edited\n")
        with pytest.raises(TourneyError, match="changed since the configuration was read"):
            run_tournament(config, workers=1)


class TestCommandLine:
    @pytest.fixture
    def tournament_leftovers(self, folder) -> Path:
        """A tournament's configuration and output folder in the bots' folder."""
        write_config(folder, ["spy", "log"])
        (folder / "out" / "replays").mkdir(parents=True)
        (folder / "out" / DB_NAME).write_text("results")
        (folder / "out" / "leaderboard.json").write_text("{}")
        (folder / "out" / "replays" / "m0-g0.json").write_text("{}")
        return folder

    def test_match_probe_reads_nothing(self, tournament_leftovers):
        """``match``: the probe (it crashes if it reads anything) plays without a fault."""
        folder = tournament_leftovers
        paths = [*forbidden(folder), str(folder / "replays")]
        probe = " ".join([PY, str(folder / "sandbox_probe.py"), "spy", "crash", *paths])
        completed = subprocess.run(
            [*REFEREE, "match", probe, str(folder / "other_bot.py"), "--games", "2", "--json"]
            + ["--replays", str(folder / "replays")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
        bots = {bot["name"]: bot for bot in json.loads(completed.stdout)["bots"]}
        assert bots["sandbox_probe"]["faults"] == {}, bots

    def test_check_bot_probe_reads_nothing(self, tournament_leftovers):
        """``check-bot``: the probe alone in the tournament's folder reads none of it."""
        folder = tournament_leftovers
        paths = [*forbidden(folder), str(folder / "replays")]
        probe = " ".join([PY, str(folder / "sandbox_probe.py"), "spy", "crash", *paths])
        completed = subprocess.run(
            [*REFEREE, "check-bot", probe, "--game", "oh-seven", "--json"]
            + ["--replays", str(folder / "replays")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        report = json.loads(completed.stdout)
        assert completed.returncode == 0, json.dumps(report)[:3000]


class TestHostileFolders:
    """A bot's folder made to break the staging: each fails alone, with its reason."""

    def test_a_link_that_becomes_a_folder_changes_no_digest(self, folder):
        """Entries are classified by lstat: a link to a path that is absent when the digest is
        taken and a folder when the copy is made is the same link."""
        os.symlink("../out", folder / "third" / "zz-peek")  # after the files
        plan = Plan("third", str(folder / "third"))
        before = tree_digest(plan)
        (folder / "out").mkdir()
        assert tree_digest(plan) == before
        os.symlink("../elsewhere", folder / "third" / "zz-other")  # a new link still counts
        assert tree_digest(plan) != before

    def test_a_link_to_the_output_folder_does_not_stop_the_tournament(self, folder):
        """The output folder does not exist when the configuration is read, and does when
        the bots are copied: a bot linking to it runs like the others (and sees nothing)."""
        os.symlink("../out", folder / "third" / "zz-peek")  # after the files
        config = load_config(write_config(folder, ["spy", "log"]))
        outcome = run_tournament(config, workers=1, fresh=True)
        assert outcome.complete and not outcome.failed

    def competitor(self, folder: Path, *args: str) -> list[str]:
        """A competitor's folder (owned by another uid) holding the hostile bot, and the
        ``match`` command running it against another bot."""
        evil = folder / "evil"
        evil.mkdir()
        shutil.copy(HOSTILE, evil / "hostile_bot.py")
        os.chown(evil, STRANGER, STRANGER)
        os.chown(evil / "hostile_bot.py", STRANGER, STRANGER)
        bot = " ".join([PY, str(evil / "hostile_bot.py"), *args])
        return [*REFEREE, "match", bot, str(folder / "other_bot.py"), "--games", "1"]

    @pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another uid needs root")
    def test_a_hard_link_to_a_secret_is_not_copied(self, folder):
        """A hard link in a competitor's folder to a file it cannot read (the tournament's
        secret key) is refused: the referee, as root, never reads it for the bot."""
        secret = folder / "secret.key"
        secret.write_text("the tournament secret")
        secret.chmod(0o600)
        command = self.competitor(folder, "steal", "secret.key")
        os.link(secret, folder / "evil" / "secret.key")
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "evil/secret.key is a file that the owner of the bot's folder" in done.stderr
        assert "the tournament secret" not in done.stdout + done.stderr
        secret.chmod(0o644)  # a file its owner could read anyway is copied
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    @pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another uid needs root")
    def test_a_file_its_acl_keeps_from_the_owner_is_not_copied(self, folder):
        """A hard link to a file whose mode bits say anyone may read it but whose ACL denies
        the competitor: the kernel, asked as the competitor, decides (not the mode bits)."""
        secret = folder / "notes.txt"
        secret.write_text("the organiser's notes")
        secret.chmod(0o644)
        command = self.competitor(folder, "steal", "notes.txt")
        entries = [(1, 6, 0xFFFFFFFF), (2, 0, STRANGER), (4, 4, 0xFFFFFFFF)]
        entries += [(0x10, 4, 0xFFFFFFFF), (0x20, 4, 0xFFFFFFFF)]  # mask r, other r
        acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)
        os.setxattr(secret, "system.posix_acl_access", acl)
        assert secret.stat().st_mode & 0o777 == 0o644
        os.link(secret, folder / "evil" / "notes.txt")
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "evil/notes.txt is a file that the owner of the bot's folder" in done.stderr
        assert "the organiser's notes" not in done.stdout + done.stderr

    @pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another uid needs root")
    def test_a_file_its_acl_lets_the_owner_read_is_copied(self, folder):
        """The converse: a file of another user whose mode bits keep others out but whose
        ACL lets the competitor read it is the competitor's to read, so it is copied."""
        shared = folder / "shared.txt"
        shared.write_text("shared with the competitor")
        shared.chmod(0o600)
        command = self.competitor(folder, "steal", "shared.txt")
        entries = [(1, 6, 0xFFFFFFFF), (2, 4, STRANGER), (4, 0, 0xFFFFFFFF)]
        entries += [(0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]  # mask r, other nothing
        acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)
        os.setxattr(shared, "system.posix_acl_access", acl)
        assert shared.stat().st_mode & 0o007 == 0  # by the mode bits alone: not for others
        os.link(shared, folder / "evil" / "shared.txt")
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    @pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another uid needs root")
    def test_a_sparse_file_counts_whole(self, folder):
        """A sparse 2 GB file (a few KB on disk) is refused by its apparent size, before a
        byte is copied, the limit named."""
        command = self.competitor(folder, "exit")
        with open(folder / "evil" / "weights.bin", "wb") as handle:
            handle.truncate(2 << 30)
        assert os.stat(folder / "evil" / "weights.bin").st_blocks < 64
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        limit = f"more than {STAGE_LIMIT_BYTES >> 20} MB of files"
        assert limit in done.stderr and "sparse file counts whole" in done.stderr

    def test_the_copies_are_bounded_together(self, folder, tmp_path):
        """Every copy within the limit per bot, all of them over the limit for all bots: the
        bot that crosses it is named."""
        bots = []
        for name in ("a", "b"):
            (folder / name).mkdir()
            (folder / name / "bot.py").write_text(OTHER_BOT)
            with open(folder / name / "weights.bin", "wb") as handle:
                handle.truncate(3 << 19)  # 1.5 MB
            bots.append(spec(name, folder / name / "bot.py"))
        limits = StageLimits(bot_bytes=2 << 20, total_bytes=3 << 20, total_key="`total_mb`")
        with pytest.raises(StagingError, match=r"'b'.*more than 3 MB \(`total_mb`") as error:
            stage(bots, str(tmp_path / "s"), limits=limits)
        assert error.value.index == 1
        stage(bots, str(tmp_path / "s"), limits=attrs.evolve(limits, total_bytes=4 << 20))


LEAGUE = """
name: league
game: oh-seven
table_size: 2
bots:
{bots}
schedule: {{type: league, games: {games}}}
time_control: {{move_seconds: 2.0, bank_seconds: 10.0, start_seconds: 20.0}}
output: out
{extra}
"""


class TestLeagueGoesOn:
    """In a league a bot whose files cannot be staged is left out with its reason; the others
    play on."""

    @staticmethod
    def league(folder: Path, bots: list[str], games: int, extra: str = "") -> Path:
        path = folder / "league.yaml"
        path.write_text(LEAGUE.format(bots="\n".join(bots), games=games, extra=extra))
        return path

    @pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another uid needs root")
    def test_a_newcomer_linking_the_secret_is_left_out(self, folder):
        """A newcomer whose folder holds a hard link to the league's ``secret.key``: refused
        (not copied), left out with the reason; the league plays its new games without it."""
        folder.parent.chmod(0o755)
        folder.chmod(0o755)
        regulars = [
            "  - {name: other, file: other_bot.py}",
            "  - {name: again, file: other_bot.py}",
        ]
        path = self.league(folder, regulars, 2)
        assert run_tournament(load_config(path), workers=1).complete
        evil = folder.parent / "evil"  # its own folder, beside the others'
        evil.mkdir()
        shutil.copy(HOSTILE, evil / "hostile_bot.py")
        os.chown(evil, STRANGER, STRANGER)
        os.link(folder / "out" / "secret.key", evil / "secret.key")
        newcomer = "  - {name: evil, file: ../evil/hostile_bot.py, args: [steal, secret.key]}"
        path = self.league(folder, [*regulars, newcomer], 6)
        done = subprocess.run(
            [*REFEREE, "tourney", "--quiet", str(path)], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        assert "bot evil is left out of this run" in done.stderr
        assert "evil/secret.key is a file that the owner of the bot's folder" in done.stderr
        with Store.open(folder / "out", create=False) as store:
            games = store.games()
            logs = json.dumps(store.all_logs())
        assert len(games) == 6
        assert all("evil" not in stored.record.seats for stored in games)
        secret = (folder / "out" / "secret.key").read_bytes()
        assert secret.hex() not in logs and "stolen" not in logs

    def test_a_league_bot_too_large_is_left_out(self, folder):
        """``staging.bot_mb``: a bot over it is left out of a league (named with the key), and
        refuses a round-robin's configuration."""
        with open(folder / "third" / "weights.bin", "wb") as handle:
            handle.truncate(2 << 20)  # sparse: 2 MB that take no room
        bots = [
            "  - {name: other, file: other_bot.py}",
            "  - {name: again, file: other_bot.py}",
            "  - {name: third, file: third/third_bot.py}",
        ]
        config = load_config(self.league(folder, bots, 2, "staging: {bot_mb: 1}"))
        assert config.bot_names == ("other", "again")
        ((name, why),) = config.left_out
        assert name == "third" and "more than 1 MB of files (key `staging.bot_mb`" in why
        assert load_config(self.league(folder, bots, 2, "staging: {bot_mb: 3}")).left_out == ()
        robin = write_config(folder, ["spy", "log"], staging={"bot_mb": 1})
        with pytest.raises(ConfigError, match=r"key `bots\[2\]`.*key `staging.bot_mb`"):
            load_config(robin)
        robin = write_config(folder, ["spy", "log"], staging={"total_mb": 1})
        with pytest.raises(ConfigError, match=r"key `bots\[2\]`.*key `staging.total_mb`"):
            load_config(robin)

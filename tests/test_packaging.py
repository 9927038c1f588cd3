"""The distribution installs both ways and exposes one ``ohseven`` namespace."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class TestEditableInstall:
    def test_packages_import_from_the_repository_folders(self) -> None:
        """The editable install maps referee/ and sdk/ under the ohseven namespace."""
        import ohseven.referee
        import ohseven.sdk

        assert Path(ohseven.referee.__file__).parent == ROOT / "referee"
        assert Path(ohseven.sdk.__file__).parent == ROOT / "sdk"

    def test_the_sdk_needs_only_the_core(self) -> None:
        """A bot's imports (the SDK, a local game, the Monte Carlo helpers) load no referee
        module and none of the referee's own dependencies."""
        code = (
            "import sys; from ohseven.sdk import local_game; from ohseven.sdk import simulate;"
            "from ohseven.example_bots.random_bot import RandomBot;"
            "local_game([RandomBot() for _ in range(3)], seed=1);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('trueskill', 'yaml', 'rich', 'jinja2', 'scipy') or m.startswith('ohseven.referee')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "[]"

    def test_a_bot_starts_without_the_engine(self) -> None:
        """What every SDK bot imports as it starts loads neither the rules engine nor attrs
        (the card model's names live in ohseven.core.names)."""
        code = (
            "import sys; from ohseven.sdk import Bot, View, run;"
            "print(sorted(m for m in sys.modules if m.startswith('ohseven.core.') or m == 'attrs'))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "['ohseven.core.names']"

    def test_no_bare_top_level_names(self) -> None:
        """Nothing is installed as a bare ``referee`` or ``sdk`` module."""
        for bare in ("referee", "sdk"):
            code = (
                "import importlib.util, sys; sys.path.remove('');"
                f"print(importlib.util.find_spec({bare!r}))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True
            )
            assert out.stdout.strip() == "None"


@pytest.mark.slow
class TestWheelInstall:
    def test_wheel_installs_into_a_fresh_venv_and_runs(self, tmp_path: Path) -> None:
        """A built wheel installs in a new venv; the console script and imports work there."""
        wheel_dir = tmp_path / "wheel"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                str(wheel_dir),
                str(ROOT),
            ],
            check=True,
        )
        (wheel,) = wheel_dir.glob("ohseven-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
        assert {"ohseven/referee/py.typed", "ohseven/sdk/py.typed"} <= names  # typed (PEP 561)
        assert any(name.startswith("ohseven/referee/templates/") for name in names)
        env_dir = tmp_path / "env"
        venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
        python = env_dir / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True)
        # the bare distribution: the core and the SDK, which a bot needs, and nothing else
        code = (
            "import ohseven.core, ohseven.sdk, ohseven.example_bots, pathlib;"
            "from ohseven.sdk import local_game;"
            "from ohseven.example_bots.random_bot import RandomBot;"
            "local_game([RandomBot() for _ in range(3)], seed=1);"
            "print(pathlib.Path(ohseven.core.__file__).parent.parent.name)"
        )
        out = subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
        )
        assert out.stdout.strip() == "ohseven"
        script = str(env_dir / "bin" / "ohseven-referee")
        bare = subprocess.run([script, "--help"], capture_output=True, text=True)
        assert bare.returncode == 2 and "Traceback" not in bare.stderr
        assert "pip install 'ohseven[referee]'" in bare.stderr
        # with the referee's extra, the referee
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[referee]"], check=True)
        help_text = subprocess.run(
            [script, "--help"], capture_output=True, text=True, check=True
        ).stdout
        assert "simulate" in help_text
        subprocess.run([str(python), "-c", "import ohseven.referee.tourney"], check=True)

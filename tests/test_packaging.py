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
        code = (
            "import ohseven.referee, ohseven.sdk, ohseven.example_bots, pathlib;"
            "print(pathlib.Path(ohseven.referee.__file__).parent.parent.name)"
        )
        out = subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
        )
        assert out.stdout.strip() == "ohseven"
        help_text = subprocess.run(
            [str(env_dir / "bin" / "ohseven-referee"), "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "simulate" in help_text

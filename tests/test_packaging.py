"""The distribution installs both ways and exposes one ``ohseven`` namespace."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the folders of the repository's own code (the distribution's packages, the example bots and
#: the benchmarks): none of their modules may use another module's private name
OWN_CODE = ("core", "sdk", "env", "referee", "example_bots", "benchmarks")


def lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` (import-linter, installed beside this Python) run on the repository."""
    program = Path(sys.executable).parent / "lint-imports"
    return subprocess.run(
        [str(program), "--no-cache", *args], capture_output=True, text=True, cwd=ROOT
    )


class TestImportContract:
    """The import contract of pyproject.toml (docs/ARCHITECTURE.md), checked by import-linter:
    every import statement, at the top, inside a function or for type checking only."""

    def test_the_contract_is_kept(self) -> None:
        """core imports no other package, sdk only core, the referee's stages only downward,
        the shared modules no stage, and no package's modules import one another in a cycle."""
        result = lint_imports()
        assert result.returncode == 0, result.stdout + result.stderr
        assert "0 broken" in result.stdout

    def test_a_broken_contract_is_caught(self, tmp_path: Path) -> None:
        """The stages in reverse order (sandbox on top, cli at the bottom) break on the real
        imports: the check reads this repository's code and fails on a wrong direction."""
        with open(ROOT / "pyproject.toml", "rb") as handle:
            settings = tomllib.load(handle)["tool"]["importlinter"]
        (stages,) = (c for c in settings["contracts"] if c["id"] == "stages")
        reversed_layers = ", ".join(f'"{layer}"' for layer in reversed(stages["layers"][:-1]))
        config = tmp_path / "reversed.toml"
        roots = ", ".join(f'"{root}"' for root in settings["root_packages"])
        config.write_text(
            "[tool.importlinter]\n"
            f"root_packages = [{roots}]\n"
            "[[tool.importlinter.contracts]]\n"
            'name = "reversed stages"\n'
            'type = "layers"\n'
            'containers = ["ohseven.referee"]\n'
            f"layers = [{reversed_layers}]\n"
        )
        result = lint_imports("--config", str(config))
        assert result.returncode == 1, result.stdout + result.stderr
        assert "ohseven.referee.cli is not allowed to import ohseven.referee.tournament" in (
            result.stdout
        )

    def test_a_deferred_import_counts(self, tmp_path: Path) -> None:
        """An upward import inside a function or under TYPE_CHECKING breaks the layers as one at
        the top would (a package of three modules made for the test)."""
        package = tmp_path / "layered"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "high.py").write_text("VALUE = 1\n")
        (package / "low.py").write_text("def f():\n    from layered.high import VALUE\n")
        (package / "typed.py").write_text(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import layered.high\n"
        )
        config = tmp_path / "layers.toml"
        config.write_text(
            '[tool.importlinter]\nroot_packages = ["layered"]\n'
            '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\n'
            'layers = ["layered.high", "layered.low | layered.typed"]\n'
        )
        program = Path(sys.executable).parent / "lint-imports"
        result = subprocess.run(
            [str(program), "--no-cache", "--config", str(config)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        assert result.returncode == 1, result.stdout + result.stderr
        assert "layered.low -> layered.high (l.2)" in result.stdout
        assert "layered.typed -> layered.high (l.3)" in result.stdout

    def test_every_package_is_under_the_contract(self) -> None:
        """Each top-level package of the distribution is a root package of the contract (a new
        one, such as ohseven.env, is checked from the day it exists)."""
        with open(ROOT / "pyproject.toml", "rb") as handle:
            project = tomllib.load(handle)["tool"]
        packages = {name for name in project["setuptools"]["packages"] if name.count(".") == 1}
        assert set(project["importlinter"]["root_packages"]) == packages


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str, where: str) -> list[str]:
    """Each private name (``_x``, not ``__x__``) that ``source`` takes from another module of
    ours: imported (``from ohseven.core.journal import _rec``, ``from .journal import _rec``)
    or read as an attribute of a module or name imported from ours (``ratings._graph``).
    Another library's private names (``os._exit``) are its business, not ours."""
    tree = ast.parse(source)
    ours: set[str] = set()  # names bound to a module (or a name) of ours
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and not (node.module or "").startswith("ohseven"):
                continue
            for alias in node.names:
                if _private(alias.name):
                    found.append((node.lineno, f"imports {alias.name}"))
                ours.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ohseven"):
                    ours.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in ours:
                found.append((node.lineno, f"reads {ast.unparse(node)}"))
    return [f"{where}:{line}: {what}" for line, what in sorted(found)]


class TestPrivateNames:
    """No module of ours uses another module's private name: what modules share is public,
    documented in its owner."""

    def test_none_in_our_code(self) -> None:
        found = [
            use
            for folder in OWN_CODE
            for path in sorted((ROOT / folder).rglob("*.py"))
            if "node_modules" not in path.parts
            for use in private_uses(path.read_text(), str(path.relative_to(ROOT)))
        ]
        assert found == []

    def test_each_way_of_taking_one_is_caught(self) -> None:
        source = (
            "import os\n"
            "import ohseven.core.game as engine\n"
            "from ohseven.core.precomputed import _BID, PLAY\n"
            "from .journal import _rec_deal\n"
            "from ohseven.referee.results import ratings\n"
            "from . import wire\n"
            "os._exit(0)\n"
            "ratings._graph(PLAY)\n"
            "wire._x.y\n"
            "engine._deal\n"
        )
        assert private_uses(source, "m.py") == [
            "m.py:3: imports _BID",
            "m.py:4: imports _rec_deal",
            "m.py:8: reads ratings._graph",
            "m.py:9: reads wire._x",
            "m.py:10: reads engine._deal",
        ]


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
        (the card model's names live in ohseven.core.names, the values' types in
        ohseven.core.values: neither imports anything)."""
        code = (
            "import sys; from ohseven.sdk import Bot, View, run;"
            "print(sorted(m for m in sys.modules if m.startswith('ohseven.core.') or m == 'attrs'))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "['ohseven.core.names', 'ohseven.core.values']"

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
        assert any(name.startswith("ohseven/referee/site/templates/") for name in names)
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
        subprocess.run([str(python), "-c", "import ohseven.referee.tournament.run"], check=True)

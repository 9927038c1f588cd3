"""The distribution installs both ways and exposes one ``ohseven`` namespace."""

from __future__ import annotations

import ast
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def referee_imports() -> dict[str, set[str]]:
    """Each ``ohseven.referee`` module (dotted below ``ohseven.referee``, e.g. ``play.match``)
    -> the ``ohseven.referee`` modules it imports, read from its source: every import statement,
    at the top or inside a function (a deferred import is still a dependency)."""
    import ohseven.referee

    folder = Path(ohseven.referee.__file__).parent
    modules = {
        ".".join(path.relative_to(folder).with_suffix("").parts)
        for path in folder.rglob("*.py")
        if path.stem not in ("__init__", "__main__")
    }
    packages = {".".join(path.relative_to(folder).parent.parts) for path in folder.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name in sorted(modules):
        path = folder.joinpath(*name.split(".")).with_suffix(".py")
        tree = ast.parse(path.read_text(), filename=str(path))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                dotted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    raise AssertionError(f"{name}: a relative import")
                base = node.module or ""
                if not base.startswith("ohseven.referee"):
                    continue
                base = base.removeprefix("ohseven.referee").lstrip(".")
                if base in packages:  # from ohseven.referee.play import match
                    found.update(f"{base}.{alias.name}".lstrip(".") for alias in node.names)
                else:
                    found.add(base)
                continue
            else:
                continue
            found.update(m.removeprefix("ohseven.referee.") for m in dotted)
        graph[name] = (found & modules) - {name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def is_cli(module: str) -> bool:
    """A command-line module: one of the ``cli`` stage."""
    return module.startswith("cli.")


class TestModuleImports:
    def test_the_walk_sees_deferred_and_relative_imports(self) -> None:
        """The import walk finds known edges: a top-level one and one inside a function."""
        graph = referee_imports()
        assert "records" in graph["play.match"]  # top level
        assert "play.match" in graph["tournament.run"]  # inside a function
        assert {"cli.tourney", "cli.match"} <= graph["cli.main"]  # from package import a, b

    def test_cli_modules_are_told_apart(self) -> None:
        """The ``cli`` stage's modules are command-line modules."""
        assert all(map(is_cli, ("cli.main", "cli.tourney", "cli.match", "cli.simulate")))
        assert not any(map(is_cli, ("tournament.run", "plan.config", "play.match")))

    def test_no_import_cycle_among_referee_modules(self) -> None:
        """No two ``ohseven.referee`` modules import each other, directly or through others."""
        assert import_cycles(referee_imports()) == []

    def test_the_cycle_finder_finds_a_cycle(self) -> None:
        """A three-module loop is reported as one cycle; a chain is not."""
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
        assert import_cycles(graph) == [["a", "b", "c"]]
        assert import_cycles({"a": {"b"}, "b": set()}) == []

    def test_no_library_module_imports_a_cli_module(self) -> None:
        """Only command-line modules import command-line modules."""
        graph = referee_imports()
        wrong = {
            module: sorted(filter(is_cli, targets))
            for module, targets in graph.items()
            if not is_cli(module) and any(map(is_cli, targets))
        }
        assert wrong == {}


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

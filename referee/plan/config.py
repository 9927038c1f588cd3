"""Tournament configuration: the frozen values a validated YAML file is read into
(:class:`TourneyConfig` and its sections), the error that lists every mistake
(:class:`ConfigError`), and the words the file may use (schedule types, deal modes, limits).

Reading a file is ``loader`` (``load_config``); the YAML with lines is ``document``, each
section's parser ``sections``, the digests and the staged copies' checks ``digests``.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from ohseven.core.rules import Rules
from ohseven.referee.records import BotSpec, TimeControl
from ohseven.referee.sandbox.settings import Limits
from ohseven.referee.sandbox.staging import StageLimits

__all__ = [
    "ConfigError",
    "BotEntry",
    "ScheduleConfig",
    "SandboxSettings",
    "RatingsConfig",
    "ServerConfig",
    "StopRule",
    "TourneyConfig",
    "SCHEDULE_TYPES",
    "DEAL_MODES",
    "LIMIT_KEYS",
    "CLUSTER_BOTS",
    "SITE_LOGS",
    "is_cluster_address",
]


SCHEDULE_TYPES = ("round-robin", "gauntlet", "league")
#: ``schedule.deals``: a deal of its own for every game, or each deal once per seat rotation
DEAL_MODES = ("independent", "duplicate")
#: how bots reach Dask workers: the same paths on every worker, or shipped from the referee
CLUSTER_BOTS = ("shared", "ship")
#: ``site_logs``: when the site shows a bot's output (its strategy's traces: rivals read it)
SITE_LOGS = ("complete", "always", "never")
#: resource limits of a bot: the fields of ``sandbox.Limits``; all positive integers but ``cpus``.
LIMIT_KEYS = tuple(field.name for field in attrs.fields(Limits))


class ConfigError(ValueError):
    """A configuration file with mistakes; ``errors`` lists each as ``file:line: key `k`: ...``."""

    def __init__(self, source: str, errors: list[str]) -> None:
        self.source = source
        self.errors = list(errors)
        count = len(self.errors)
        head = f"{source}: {count} error{'s' if count != 1 else ''} in the configuration"
        super().__init__("\n".join([head, *(f"  {error}" for error in self.errors)]))


@attrs.frozen
class BotEntry:
    """A bot of the tournament: its spec, the sandbox limits it overrides, and who wrote it
    (``author``: two bots of one author never sit at one table; None: nobody else's)."""

    spec: BotSpec
    limits: tuple[tuple[str, int | float], ...] = ()
    author: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name


@attrs.frozen
class StopRule:
    """A gauntlet's stopping rule (``schedule.stop``; see ``stopping``): stop a candidate once
    its points per game against the field are settled (better, worse or within ``margin``)."""

    confidence: float = 0.95
    #: the difference of points per game (candidate minus the field) that matters
    margin: float = 1.0
    #: games of the candidate (in complete repeats) before any decision
    min_games: int = 30


@attrs.frozen
class ScheduleConfig:
    type: str = "round-robin"
    repeats: int = 1
    games_per_table: int = 1
    candidates: tuple[str, ...] = ()
    deals: str = "independent"
    #: a league's budget of games (0 for the other types)
    games: int = 0
    #: a gauntlet's stopping rule, or None (every repeat is played)
    stop: StopRule | None = None


@attrs.frozen
class SandboxSettings:
    """The sandbox mode, the limits given in the file (others keep the sandbox's defaults) and
    whether bots may run between their turns (``ponder``, see ``sandbox.SandboxConfig``)."""

    mode: str = "bwrap"
    limits: tuple[tuple[str, int | float], ...] = ()
    ponder: bool = False
    extra_paths: tuple[str, ...] = ()  # absolute host paths shown read-only to every bot


@attrs.frozen
class RatingsConfig:
    fault_ranks_last: bool = True
    draw_probability: float | None = None  # None: the game's estimate (see ``ratings``)


@attrs.frozen
class ServerConfig:
    """The ``server`` section: how ``ohseven-referee serve`` listens, and what each author and
    each upload may do (see docs/SERVER.md). Not part of the digest: it may change between
    runs of a league."""

    #: HOST:PORT the server listens on (``--listen`` overrides it); loopback by default
    listen: str = "127.0.0.1:8707"
    #: bots (names) of one author playing at the same time
    max_active_bots: int = 3
    #: uploads of one author in any hour
    uploads_per_hour: int = 10
    #: the compressed archive (the request body)
    max_upload_bytes: int = 20 << 20
    #: the unpacked tree: bytes of the files, number of entries, folder depth
    max_unpacked_bytes: int = 100 << 20
    max_files: int = 2000
    max_depth: int = 16
    #: versions waiting for their check; an upload finding the queue full is refused
    check_queue: int = 20
    #: seconds one check may take: the longest any other author's check waits for one of
    #: a hostile author's (checks take turns by author). check-bot asks about 1,130 decisions
    #: (Oh-Seven; 615 for Oh Hell): 300 s checks a bot averaging up to ~250 ms a decision
    check_timeout: float = 300.0
    #: ``final``: the top active bots that play the final round, and the least number of its
    #: games (0: one round-robin among them)
    final_bots: int = 8
    final_games: int = 0
    #: unrated games on request: games of one request at most, requests waiting or playing
    #: (of all authors, of one author)
    unrated_games: int = 10
    unrated_queue: int = 20
    unrated_per_author: int = 2
    #: failed token or session checks in any minute, of one client address and of one author
    #: name, before they are refused (429) until the minute is over
    auth_failures: int = 10
    auth_failures_per_author: int = 30
    #: whether uploads are accepted (``final`` turns them off)
    submissions: bool = True


@attrs.frozen
class TourneyConfig:
    name: str
    rules: Rules
    table_sizes: tuple[int, ...]
    bots: tuple[BotEntry, ...]
    schedule: ScheduleConfig = ScheduleConfig()
    time_control: TimeControl = TimeControl()
    sandbox: SandboxSettings = SandboxSettings()
    ratings: RatingsConfig = RatingsConfig()
    workers: int = 1
    output: str = "out"
    #: the organiser's seed; None (the default): a random secret kept in the output (``secret``)
    seed: int | None = None
    replays: bool = False
    #: publish the secret and every game's seed once the tournament is complete
    reveal_seeds: bool = False
    #: a Dask scheduler's address (``tcp://HOST:8786``), or None for the local pool
    cluster: str | None = None
    cluster_bots: str = "shared"
    source: str = "<config>"
    #: digest of everything that decides the results (not workers, output, cluster or source;
    #: for a league, not the bots nor the budget of games either: see ``changed_keys``)
    digest: str = ""
    #: (name, digest of the bot's entry and program) of every bot: a league refuses a bot
    #: that changed under the same name
    bot_fingerprints: tuple[tuple[str, str], ...] = ()
    #: the document as read, as plain data (stored with the tournament)
    document: dict = attrs.field(factory=dict, eq=False)
    #: the default of every key path the file may give (``rules.passing`` -> False): a key
    #: written at its default is the same tournament as one left out (``changed_keys``)
    defaults: dict = attrs.field(factory=dict, eq=False)
    #: the line of every key path in ``source`` (``sandbox.mode`` -> 12), for messages
    key_lines: dict[str, int] = attrs.field(factory=dict, eq=False)
    #: (bot name, ``staging.tree_digest`` of its staged files): part of ``digest``
    bot_digests: tuple[tuple[str, str], ...] = ()
    #: how much of the bots' files may be copied for the run (``staging``)
    staging: StageLimits = StageLimits()
    #: when the site shows the bots' output: ``complete`` (once the tournament is), ``always``,
    #: ``never``
    site_logs: str = "complete"
    #: (bot name, why) of a league's bots left out of this run: their files cannot be staged
    left_out: tuple[tuple[str, str], ...] = ()

    #: the ``server`` section (used by ``serve`` only)
    server: ServerConfig = ServerConfig()

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

    def where(self, key: str) -> str:
        """``source:line`` of ``key`` (a dotted path), or the source where the key is not
        written (a default)."""
        line = self.key_lines.get(key)
        return f"{self.source}:{line}" if line else self.source

    @property
    def for_trusted_bots(self) -> tuple[str, ...]:
        """The settings that make this tournament fit for trusted bots only, each as
        ``file:line: key `k`: why`` (empty: fit for bots nobody vouches for). A competition
        server refuses such a configuration. ``sandbox.mode: unsandboxed``: no sandbox at all.
        ``schedule.deals: duplicate``: a bot's process of one rotation can leave the deal to
        its next process through the machine's page cache (which files' pages it read), which
        no sandbox on one machine hides from a timed read (SECURITY.md, with the figures).
        ``ponder: true`` (the sandbox's or a bot's): bots that run between their turns run
        beside the others, so two can signal through the CPU they share (SECURITY.md)."""
        found = []
        if self.sandbox.mode == "unsandboxed":
            found.append(
                f"{self.where('sandbox.mode')}: key `sandbox.mode`: unsandboxed runs the bots "
                "with no sandbox at all"
            )
        if self.schedule.deals == "duplicate":
            found.append(
                f"{self.where('schedule.deals')}: key `schedule.deals`: duplicate deals let a "
                "bot remember a deal across rotations through the page cache (SECURITY.md)"
            )
        pondering: list[tuple[str, object]] = [("sandbox.ponder", self.sandbox.ponder)]
        written = self.document.get("bots")
        for index, entry in enumerate(written if isinstance(written, list) else []):
            if isinstance(entry, dict):
                pondering.append((f"bots[{index}].ponder", entry.get("ponder")))
        for key, value in pondering:
            if value is True:
                found.append(
                    f"{self.where(key)}: key `{key}`: ponder lets bots run beside each other, "
                    "so two can signal through the CPU they share (SECURITY.md)"
                )
        return tuple(found)

    @property
    def game(self) -> str:
        return self.rules.game


_CLUSTER_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})")


def is_cluster_address(value: Any) -> bool:
    """Whether ``value`` is a Dask scheduler address: ``tcp://HOST:PORT`` or ``tls://HOST:PORT``."""
    match = _CLUSTER_ADDRESS.fullmatch(value) if isinstance(value, str) else None
    return match is not None and 0 < int(match.group(3)) < 65536

"""The published site in a real headless Chromium, opened from ``file://`` (as a user would).

Needs Playwright for Python and a Chromium executable on PATH (Debian: the ``chromium``
package); the browser is the system's, never downloaded. Screenshots of the pages go to
``artifacts/`` at the repository root.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ARTIFACTS
from ohseven.referee.site.publish import publish
from played_cup import BOTS, FAULTY, HOST, build_tournament
from playwright.sync_api import Browser, ConsoleMessage, Page

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = build_tournament(tmp_path_factory.mktemp("browser"), table=4, games_per_match=4)
    publish(out)
    return out


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
    yield page
    context.close()
    assert errors == [], f"console errors: {errors}"


def ranking_names(page: Page) -> list[str]:
    return page.locator("#ranking tbody tr").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-bot'))"
    )


class TestIndex:
    def test_ranking_matches_the_json_and_sorts(self, site: Path, page: Page) -> None:
        """The ranking lists the bots of leaderboard.json in its order with its scores; a click
        on the bot heading sorts by name, a second click reverses it; faults sort most first."""
        board = json.loads((site / "leaderboard.json").read_text())
        page.goto((site / "index.html").as_uri())
        page.wait_for_selector("#rating-chart")
        assert ranking_names(page) == [bot["name"] for bot in board["bots"]]
        scores = page.locator("#ranking tbody td.score").all_inner_texts()
        assert scores == [f"{bot['score']:.2f}" for bot in board["bots"]]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "index.png"), full_page=True)

        page.click("#ranking thead th:nth-child(2)")  # bot name, ascending
        names = sorted((bot["name"] for bot in board["bots"]), key=str.casefold)
        assert ranking_names(page) == names
        page.click("#ranking thead th:nth-child(2)")
        assert ranking_names(page) == names[::-1]
        page.click("#ranking thead th:nth-child(9)")  # faults, most first
        faults = {bot["name"]: bot["faults_total"] for bot in board["bots"]}
        shown = [faults[name] for name in ranking_names(page)]
        assert shown == sorted(shown, reverse=True) and ranking_names(page)[0] == FAULTY

    def test_ranking_shows_the_uncertainty(self, site: Path, page: Page) -> None:
        """Each row shows its place (with '=' when tied), its points-per-game interval and its
        chance of being better than the next bot, as in leaderboard.json."""
        board = json.loads((site / "leaderboard.json").read_text())
        page.goto((site / "index.html").as_uri())
        places = page.locator("#ranking tbody td.rank").all_inner_texts()
        assert places == [bot["place"] for bot in board["bots"]]
        intervals = page.locator("#ranking tbody td.ppg").all_inner_texts()
        for bot, text in zip(board["bots"], intervals, strict=True):
            low, high = bot["points_per_game_ci"]
            assert text == f"{bot['points_per_game']:.2f} [{low:.2f}, {high:.2f}]"
        chances = page.locator("#ranking tbody td.los").all_inner_texts()
        for bot, text in zip(board["bots"], chances, strict=True):
            if bot["superiority_next"] is None:
                assert text == ""
            else:
                assert text.startswith(f"{100 * bot['superiority_next']:.0f}%")

    def test_charts_are_drawn(self, site: Path, page: Page) -> None:
        """Chart.js (vendored, loaded from file://) draws the rating history: one mu line and
        two band edges per bot."""
        page.goto((site / "index.html").as_uri())
        count = page.evaluate("Chart.getChart('rating-chart').data.datasets.length")
        board = json.loads((site / "leaderboard.json").read_text())
        assert count == 3 * len(board["bots"])
        assert page.evaluate("Chart.getChart('trump-chart').data.labels.length") == 4


class TestBotPage:
    def test_bot_page_from_the_ranking(self, site: Path, page: Page) -> None:
        """A bot's link opens its page with its statistics, charts and its fault log."""
        page.goto((site / "index.html").as_uri())
        page.click(f"#ranking a:text-is('{FAULTY}')")
        page.wait_for_selector("#bot-name")
        assert page.inner_text("#bot-name") == FAULTY
        assert "Zero-bid rate" in page.inner_text("#bot-stats")
        assert "μ ± σ" in page.inner_text(".facts")  # not "M ± Σ" from the uppercase style
        assert "timeout" in page.inner_text("#faults")
        assert "ValueError: bad card" in page.inner_text("#faults pre.log")
        assert HOST not in page.content()  # no path of the organiser's machine
        trace = page.locator("#faults pre.trace").filter(has_text="KeyError")
        assert trace.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
        assert 'File "delta/bot.py", line 11, in f' in trace.inner_text()
        assert page.evaluate("Chart.getChart('bid-chart').data.datasets.length") == 2
        page.screenshot(path=str(ARTIFACTS / "bot.png"), full_page=True)


class TestFaults:
    def test_a_fault_links_to_its_step_and_the_step_is_marked(self, site: Path, page: Page) -> None:
        """A fault's link on the bot page opens the replay at the step showing its move, marked
        as not the bot's own answer; the replay's fault list leads to the same step."""
        page.goto((site / "bots" / "delta-bot.html").as_uri())
        link = page.locator("#faults a[href*='move=']").first
        href = link.get_attribute("href")
        assert href is not None
        link.click()
        page.wait_for_selector("#replay:not([hidden])")
        assert page.get_attribute("body", "data-fault") in ("timeout", "bot_error")
        marked = page.get_attribute("body", "data-frame")
        assert "the referee's fallback" in page.inner_text("#caption") or "substitute" in (
            page.inner_text("#caption")
        )
        assert FAULTY in page.inner_text("#caption")  # the move shown is the faulty seat's
        page.click("#first")
        assert page.get_attribute("body", "data-fault") == ""
        move = href.split("move=")[1]
        page.click(f"#faults button:text-matches('^move {move} ')")
        assert page.get_attribute("body", "data-frame") == marked
        assert HOST not in page.content()
        page.screenshot(path=str(ARTIFACTS / "replay-fault.png"), full_page=True)

    @pytest.mark.parametrize("width", [390, 1280])
    def test_the_bot_page_with_faults_fits(self, site: Path, browser: Browser, width) -> None:
        """A faulty bot's page, a traceback line of 150 characters included, does not scroll
        sideways: the traceback scrolls in its own box."""
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto((site / "bots" / "delta-bot.html").as_uri())
        page.wait_for_selector("#faults pre.trace")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        context.close()


class TestReplay:
    def test_step_to_the_last_trick(self, site: Path, page: Page) -> None:
        """From the games list a replay opens; stepping trick by trick reaches the last trick,
        whose totals after scoring are the game's result."""
        page.goto((site / "games.html").as_uri())
        page.click("table.games a:text-is('replay')")
        page.wait_for_selector("#replay:not([hidden])")
        game = page.evaluate("new URLSearchParams(location.search).get('game')")
        script = (site / "replay-data" / f"{game}.js").read_text()
        data = json.loads(script[len("ohsevenReplay(") : -len(");\n")])
        steps = 0
        while not page.is_disabled("#next-trick"):
            page.click("#next-trick")
            steps += 1
        assert steps == len(data["tricks"])
        assert page.get_attribute("#caption", "data-kind") == "trick"
        assert page.locator("#trick .card").count() == len(data["players"])
        page.screenshot(path=str(ARTIFACTS / "replay.png"), full_page=True)
        page.click("#last")
        totals = page.locator("#seats td.total").all_inner_texts()
        assert [int(t) for t in totals] == data["result"]["totals"]
        page.keyboard.press("Home")
        assert page.get_attribute("body", "data-frame") == "0"
        hands = page.locator("#seats tbody tr").first.locator(".card").count()
        assert hands == 7

    def test_unknown_game_says_so(self, site: Path, browser: Browser) -> None:
        """A replay link to a game without a replay shows a message, not a blank page."""
        page = browser.new_page()
        page.goto((site / "replay.html").as_uri() + "?game=nope-g0")
        page.wait_for_selector("#replay-error:not([hidden])")
        assert "No replay was recorded for game nope-g0" in page.inner_text("#replay-error")
        page.close()


def overflowing_without_cue(page: Page) -> list[str]:
    """The ids (or classes) of tables wider than their box that show no scroll cue."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.scroll'))
          .filter(box => box.scrollWidth > box.clientWidth + 1)
          .filter(box => {
            const cue = box.previousElementSibling;
            return !(cue && cue.classList.contains('scroll-cue') && cue.offsetParent !== null);
          })
          .map(box => (box.firstElementChild && box.firstElementChild.id) || box.className)"""
    )


class TestLayout:
    @pytest.mark.parametrize("width", [390, 1280])
    def test_wide_tables_show_a_scroll_cue(self, site: Path, browser: Browser, width) -> None:
        """At 390 and 1280 px, every table wider than its box (its hidden columns) has a visible
        cue above it; on a phone some tables do overflow."""
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        bots = sorted((site / "bots").glob("*.html"))
        overflowing = 0
        for path in [site / "index.html", site / "games.html", *bots[:2]]:
            page.goto(path.as_uri())
            assert overflowing_without_cue(page) == [], path.name
            overflowing += page.locator(".scroll-cue").count()
        page.goto((site / "games.html").as_uri())
        page.click("table.games a:text-is('replay')")
        page.wait_for_selector("#replay:not([hidden])")
        page.click("#last")
        assert overflowing_without_cue(page) == []
        if width == 390:
            assert overflowing > 0
        context.close()

    def test_no_table_is_cut_at_1280(self, site: Path, browser: Browser) -> None:
        """At 1280 px the head-to-head matrix and the games lists (index, games pages, a bot
        page) show every column: nothing to scroll to, no page wider than the window."""
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        for name in ("index.html", "games.html", "bots/alpha.html"):
            page.goto((site / name).as_uri())
            page.wait_for_selector("table.games")
            cut = page.evaluate(
                """() => Array.from(document.querySelectorAll('.scroll'))
                  .filter(box => box.scrollWidth > box.clientWidth + 1)
                  .map(box => (box.firstElementChild && box.firstElementChild.id)
                    || box.firstElementChild.className)"""
            )
            assert cut == [], (name, cut)
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280, name
        context.close()

    def test_the_replay_fits_a_phone(self, site: Path, browser: Browser) -> None:
        """On a 390 px wide phone the replay page is no wider than the screen."""
        context = browser.new_context(viewport={"width": 390, "height": 844})
        page = context.new_page()
        page.goto((site / "games.html").as_uri())
        page.click("table.games a:text-is('replay')")
        page.wait_for_selector("#replay:not([hidden])")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.click("#last")  # the widest frame: every trick and score on the sheet
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(ARTIFACTS / "replay-phone.png"), full_page=True)
        context.close()

    def test_greek_letters_keep_their_case(self, site: Path, page: Page) -> None:
        """The rating heading reads "μ ± σ" (not "M ± Σ" from the headings' uppercase style)."""
        page.goto((site / "index.html").as_uri())
        assert page.inner_text("#ranking thead th:nth-child(4)") == "μ ± σ"


#: nine bots, names as long as real ones (the first four: the fixture's, with its faulty bot)
NINE = (*BOTS, "montecarlo-v2", "heuristic-b", "expectimax-deep", "mybot-v12", "random-seat")


def page_width_problems(page: Page, width: int) -> list[str]:
    """What a reader at ``width`` px could not see: a page wider than the window, and (at
    1280) a table wider than its box (scrolled inside it: cut) or than its container."""
    problems = []
    if page.evaluate("document.documentElement.scrollWidth") > width:
        problems.append(f"page {page.evaluate('document.documentElement.scrollWidth')} px")
    if width >= 1280:
        problems += page.evaluate(
            """() => Array.from(document.querySelectorAll('table')).flatMap(table => {
              const box = table.parentElement;
              const name = table.id || table.className || box.id || box.className;
              const cut = [];
              if (box.scrollWidth > box.clientWidth + 1) cut.push(name + ': box scrolls');
              if (table.getBoundingClientRect().right > window.innerWidth + 1)
                cut.push(name + ': past the window');
              return cut;
            })"""
        )
    return problems


class TestEveryTableSize:
    """Every table size each game allows (Oh-Seven 2-9, Oh Hell 3-7): the index, the games
    list, a bot page and a replay at its last step (its widest: every round on the score
    sheet) fit 1280 and 390 px with every column shown at 1280."""

    @pytest.mark.parametrize(
        ("game", "size"),
        [("oh-seven", n) for n in range(2, 10)] + [("oh-hell", n) for n in range(3, 8)],
    )
    def test_every_page_fits(self, tmp_path: Path, browser: Browser, game: str, size: int) -> None:
        out = build_tournament(tmp_path, game=game, table=size, games_per_match=1, bots=NINE[:size])
        publish(out)
        found = {}
        for width in (1280, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            for name in ("index.html", "games.html", "bots/alpha.html"):
                page.goto((out / name).as_uri())
                page.wait_for_selector("table")
                found[(width, name)] = page_width_problems(page, width)
            page.goto((out / "games.html").as_uri())
            page.click("table.games a:text-is('replay')")
            page.wait_for_selector("#replay:not([hidden])")
            page.click("#last")
            assert page.locator("#seats tbody tr").count() == size
            found[(width, "replay")] = page_width_problems(page, width)
            if width == 1280 and size in (7, 9):
                page.screenshot(path=str(ARTIFACTS / f"replay-{game}-{size}.png"), full_page=True)
            context.close()
        assert {key: value for key, value in found.items() if value} == {}

"""Games started from a position in the middle of a round (for search: Monte Carlo playouts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .cards import OH_HELL_DECK
from .game import Game
from .names import OH_SEVEN
from .oh_hell import OhHellGame
from .oh_seven import OhSevenGame
from .options import OH_SEVEN_HAND, Rules, RulesError
from .precomputed import PLAY


class InvalidPositionError(RulesError, ValueError):
    """A position for :func:`position_game` that no round of the game can reach."""


def position_game(
    rules: Rules,
    players: int,
    *,
    hands: Sequence[Sequence[int]],
    trump: int | None,
    leader: int,
    trick: Sequence[int],
    bids: Sequence[int],
    tricks_won: Sequence[int],
    seed: int = 0,
) -> Game:
    """A game in the PLAY phase at a position inside one round, for Monte Carlo playouts.

    ``hands[s]`` are the cards seat ``s`` still holds, ``trump`` the trump suit (0..3, or
    ``None``), ``trick`` the cards already played in the current trick in order, starting from
    ``leader`` (so the seat to act is ``(leader + len(trick)) % players``), ``bids`` the
    round's bids (Oh-Seven: the ranks 0..7 of the accepted bid cards; Oh Hell: tricks) and
    ``tricks_won`` the tricks each seat has taken so far in the round. The hand size is implied:
    tricks played (``sum(tricks_won)``) plus tricks left (the leader's cards, plus one when it
    has already played to the current trick). The game ends (phase OVER) after the round's last
    trick, and its ``scores`` are that round's points only (no re-bid bonus). Its event log
    starts at the position. Raises :class:`InvalidPositionError` for an impossible position.
    """

    def bad(message: str) -> InvalidPositionError:
        return InvalidPositionError(f"position for {rules.game} with {players} players: {message}")

    rules.check_players(players)
    n = players
    if len(hands) != n or len(bids) != n or len(tricks_won) != n:
        raise bad("hands, bids and tricks_won need one entry per seat")
    if type(leader) is not int or not 0 <= leader < n:
        raise bad(f"leader {leader!r} is not a seat")
    if len(trick) >= n:
        raise bad(f"a trick in progress holds fewer than {n} cards, not {len(trick)}")
    if trump is not None and (type(trump) is not int or not 0 <= trump < 4):
        raise bad(f"trump {trump!r} is not a suit 0..3 or None")
    if any(type(t) is not int or t < 0 for t in tricks_won):
        raise bad(f"tricks_won {list(tricks_won)!r} must be counts")
    played = sum(tricks_won)
    left = len(hands[leader]) + (1 if trick else 0)
    size = played + left
    if left < 1:
        raise bad("no trick is left to play")
    in_trick = {(leader + i) % n for i in range(len(trick))}
    for seat in range(n):
        expected = left - (1 if seat in in_trick else 0)
        if len(hands[seat]) != expected:
            raise bad(f"seat {seat} holds {len(hands[seat])} cards, expected {expected}")
    if rules.game == OH_SEVEN:
        if size != OH_SEVEN_HAND:
            raise bad(f"an Oh-Seven round has {OH_SEVEN_HAND} tricks, not {size}")
        game: Game = OhSevenGame(n, seed, rules)
        copies = 1 if n <= 4 else 2
        top_bid = 7
    else:
        if size * n > OH_HELL_DECK.size:
            raise bad(f"hands of {size} cards do not fit {n} players")
        game = OhHellGame(n, seed, rules, hand_sizes=(size,), first_dealer=(leader - 1) % n)
        copies = 1
        top_bid = size
    if any(type(b) is not int or not 0 <= b <= top_bid for b in bids):
        raise bad(f"bids {list(bids)!r} must be 0..{top_bid}")
    cards = [c for hand in hands for c in hand] + list(trick)
    if any(type(c) is not int or not 0 <= c < game.deck.size for c in cards):
        raise bad("every card must be a card of the deck")
    counts = Counter(cards)
    if max(counts.values()) > copies:
        raise bad(f"a card appears more than {copies} time(s)")
    # a fresh log: nothing has read the events of the deal the position replaces
    game._moves = []
    game._events = []
    game._log = []
    game._eager = False
    # the cards already in the trick were played before the position: no moves or events
    game._trick_recorded = len(trick)
    game.scores = [0] * n
    game.round = 0
    game.rounds = 1
    game.hand_size = size
    game.hands = [sorted(hand) for hand in hands]
    game.trump = trump
    game.leader = leader
    game.trick = list(trick)
    game.tricks_won = list(tricks_won)
    game.bids = list(bids)
    game.phase = PLAY
    game.to_act = ((leader + len(trick)) % n,)
    return game

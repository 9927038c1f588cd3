"""A bot with one bug, as a bot's author meets it: ``choose_play`` looks a card up in an empty
table on the fourth trick of every round (a KeyError its SDK covers with a substitute)."""

from ohseven.sdk import Bot, run


class OneBug(Bot):
    name = "one_bug"

    def choose_play(self, view):
        seen = {}
        if len(view.tricks) == 3:
            return seen[view.legal[0]]
        return view.legal[0]


if __name__ == "__main__":
    run(OneBug)

"""The results stage: what was played and what it means. It owns the SQLite store (``store``),
TrueSkill ratings and their uncertainty (``ratings``, ``uncertainty``), a tournament's database
read in one go (``archive``), the leaderboard documents (``leaderboard``), the running
leaderboard (``board``) and its terminal rendering (``display``)."""

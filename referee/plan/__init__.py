"""The plan stage: what a tournament will play. It owns the tournament YAML and its checks
(``config``), the schedule of matches built lazily in canonical order (``schedule``) and the
sequential stopping rule of a gauntlet (``stopping``). It plays nothing and stores nothing."""

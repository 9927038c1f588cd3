"""The plan stage: what a tournament will play. It owns the tournament YAML and its checks: the
values it is read into (``config``: ``TourneyConfig``, ``ConfigError``), the YAML with lines and
its typed getters (``document``), each section's parser (``sections``), the digests of what
decides the results (``digests``) and reading a file (``loader``: ``load_config``); the schedule
of matches built lazily in canonical order (``schedule``) and the sequential stopping rule of a
gauntlet (``stopping``); and the run plan, the configuration resolved once into what a run needs
(``run_plan``: ``RunPlan``, ``sandbox_config``), handed down to the run loop. It plays nothing
and stores nothing."""

"""The sandbox stage: everything between a bot's command and a contained process. It owns the
bubblewrap jail, rlimits, seccomp and per-bot uids (``process``), a cgroup per bot
(``cgroups``) and each bot's read-only staged copy of its files (``staging``). It knows nothing
of games: the play stage starts bots through it."""

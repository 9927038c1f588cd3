"""The sandbox stage: everything between a bot's command and a contained process. It owns what
a sandbox is asked for (``settings``: modes, limits, ``SandboxConfig``, ``check_sandbox``), the
view of the file system a bot gets (``paths``), the pool of unprivileged uids (``uids``), the
seccomp filter (``seccomp``), the bounded capture of a bot's output (``capture``), one bot
process from start to kill in bubblewrap with rlimits (``process``: ``BotProcess``), a cgroup per
bot (``cgroups``) and each bot's read-only staged copy of its files (``staging``). It knows nothing
of games: the play stage starts bots through it."""

"""The command-line stage: ``ohseven-referee`` and its subcommands. ``main`` builds the parser;
each subcommand's parser and run live in a module of their own (``match``, ``tourney``,
``publish``, ``view``, ``replay``, ``simulate``, ``check_bot``), with the bot arguments they
share in ``bot_args``. Nothing below this stage imports it."""

"""The play stage: one match of sandboxed bots at one table. It owns the referee side of the
wire protocol (``connection``: frames, messages, a connection's state per bot) and the bot
processes of a table behind ``ohseven.core.table``'s links (``match``). Every command that plays
a game (match, tourney, check-bot, replay, the server) drives it through its public API."""

"""A policy learnt in ``ohseven.env`` with numpy alone, and the bot that plays it.

It owns the example of the learning path: :mod:`.mlp` (a small network, its forward pass and
its file), :mod:`.train` (REINFORCE in the Gymnasium environment against random bots, then a
sandboxed match against them), and ``trained_bot.py`` (the saved ``policy.npz`` played by
:class:`ohseven.sdk.PolicyBot`). Needs the ``rl`` extra to train, only numpy to play.
"""

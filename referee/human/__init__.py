"""A person's seat at a table of bots (``ohseven-referee play``).

:mod:`.seat` owns the seat itself: the in-process link that asks a person instead of a bot
process (what the person is shown is exactly what a bot in that seat is sent), the reading of
a typed or clicked answer into a legal move, and the plain-data picture of the position that
both front ends draw. :mod:`.terminal` draws it with rich and reads answers from the keyboard;
:mod:`.web` serves it as a local page (Starlette and uvicorn, the ``server`` extra) and reads
clicks.
"""

"""The tournament stage: running a whole tournament. It owns the run loop (``run``: the output
lock, staging, the store, the feed of matches into a pool), the feeds of matches to play next
(``feeds``), the pools that play them (``pool``: local worker processes; ``cluster``: Dask),
``TourneyError`` (``errors``), which the loop and both pools raise, and the clean stop a signal
asks for (``stop_signals``)."""

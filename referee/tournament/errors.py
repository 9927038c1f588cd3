"""The error the tournament machinery shares: the run loop, the local pool and the cluster's
(``cluster.ClusterError`` is one) all raise it, and none of them imports another for it."""

from __future__ import annotations

__all__ = ["TourneyError"]


class TourneyError(RuntimeError):
    """A tournament that cannot run: output in use, another tournament's database, a crash."""

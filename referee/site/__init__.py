"""The site stage: the static HTML site of a tournament. It owns the pages' data (``pages``),
the replay viewer's frames (``replay_view``), the templates and static assets, and ``publish``,
which renders and writes them atomically."""

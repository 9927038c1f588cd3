"""The competition server (``ohseven-referee serve``): a league played continuously on the
tournament machinery while authors submit bots and everyone reads the results live. It owns the
server's own database (authors and their hashed tokens, uploaded bot versions and their check
reports), the hostile-input handling of uploads, the check queue, the live incremental view of
the tournament database, and the HTTP application (JSON API and pages) with its sessions."""

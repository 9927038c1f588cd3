"""The ohseven referee: matches, tournaments, the sandbox, ratings and publishing. The rules
engine both sides share is ``ohseven.core``."""

"""ohseven sdk."""

"""Search: one query value, candidate generation over the index, pure ranking math."""

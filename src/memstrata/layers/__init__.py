"""One module per memory layer; each owns its files and knows how to parse them into docs."""

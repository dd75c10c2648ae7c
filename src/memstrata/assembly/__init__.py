"""Assembly: turning memory into the text an agent's prompt starts with."""

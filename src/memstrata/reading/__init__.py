"""Rule-based readers of memory text: no model, no store, plain functions of strings."""

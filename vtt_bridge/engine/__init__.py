"""The sans-I/O attack engine: steps, decisions, context, dice, resolution (plain Python)."""

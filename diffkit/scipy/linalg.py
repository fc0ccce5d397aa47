"""``diffkit.scipy.linalg`` (being written)."""

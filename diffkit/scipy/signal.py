"""``diffkit.scipy.signal`` (being written)."""

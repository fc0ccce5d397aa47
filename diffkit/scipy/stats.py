"""``diffkit.scipy.stats`` (being written)."""

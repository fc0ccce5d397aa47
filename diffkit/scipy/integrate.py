"""``diffkit.scipy.integrate`` (being written)."""

"""The three engines: forward (dual numbers), reverse (tape) and batching (vmap)."""

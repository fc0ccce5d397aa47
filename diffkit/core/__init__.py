"""Primitives, traces and ``bind``: the machinery the engines share."""

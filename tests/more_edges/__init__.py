"""Edge samples by family for tests/test_edges.py (see tests/edge_records.py)."""

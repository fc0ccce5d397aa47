"""Records for tests/test_primitives.py, one module per family (see op_records.py)."""

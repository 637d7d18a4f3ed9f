"""Reads for the pages, as frozen dataclasses (one module per area)."""

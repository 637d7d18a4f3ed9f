"""Context Architect app: core."""

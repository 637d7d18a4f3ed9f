"""Context Architect app: metrics."""

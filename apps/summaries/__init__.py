"""Context Architect app: summaries."""

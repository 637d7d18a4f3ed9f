"""Context Architect app: console."""

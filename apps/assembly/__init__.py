"""Context Architect app: assembly."""

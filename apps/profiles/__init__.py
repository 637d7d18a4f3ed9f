"""Context Architect app: profiles."""

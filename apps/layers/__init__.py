"""Context Architect app: layers."""

"""Context Architect app: workspaces."""

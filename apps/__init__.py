"""Django apps of Context Architect, one per concern."""

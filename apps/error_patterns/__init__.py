"""Context Architect app: error_patterns."""

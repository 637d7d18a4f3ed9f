"""Context Architect app: consumption (which injected packages agents used), strategies and stats."""

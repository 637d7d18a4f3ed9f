"""Context Architect app: redaction of secrets and PII before anything from an agent is stored."""

"""The pages, one module per area (dashboard, layers, profiles, preview, patterns, ...)."""

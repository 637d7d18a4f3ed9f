"""The developer console's pages, one module per area: records, traces (and replay), state dumps."""

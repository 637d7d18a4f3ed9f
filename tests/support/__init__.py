"""What the tests share, imported from here and never from a conftest or a sibling test module.

- `tenants`: a workspace with its key and client (`Tenant`, `make_tenant`, `admin_client`).
- `api`: an agent's calls through the API (`layer`, `bulk`, `ask`).
- `fixtures`: the shared fixtures, registered for every test by `pytest_plugins` in tests/conftest.py.
- `waiting`: `wait_until`, the one polling helper.
- `fake_openai`: the one local stand-in for an OpenAI-compatible (or Anthropic) provider.
- `browser`: the one headless Chromium launcher.
"""

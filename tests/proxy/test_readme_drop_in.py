"""The README's "Drop-in" section works as written: the admin's curl, then the two SDK snippets.

Only the placeholders change, as a reader fills them: the URL `http://127.0.0.1:8000` becomes the
live server's, `ca_...` the workspace's key, `ca_admin...` an admin key, the provider's URL the fake
upstream's and `sk-...` its key.
"""

from __future__ import annotations

import re
import subprocess
import sys

from apps.workspaces.models import Scope
from apps.workspaces.services import api_key_create
from tests.proxy.proxied import FACTS, Proxied
from tests.support.processes import ROOT


def drop_in_blocks() -> list[tuple[str, str]]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Drop-in: the LLM proxy\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL)


def test_each_sdk_snippet_changes_two_lines_of_the_providers_own_example() -> None:
    snippets = [body for language, body in drop_in_blocks() if language == "python"]
    assert len(snippets) == 2
    for snippet in snippets:
        head = snippet.split("\n\n")[0].splitlines()
        assert len(head) == 2 and head[0].startswith("from ") and "base_url=" in head[1]


def test_the_snippets_run_as_written(proxied: Proxied) -> None:
    admin = api_key_create(workspace=proxied.a.workspace, name="admin", scopes=list(Scope.values)).secret
    (curl,) = [body for language, body in drop_in_blocks() if language == "bash"]
    curl = (
        curl.replace("http://127.0.0.1:8000", proxied.base)
        .replace("ca_admin...", admin)
        .replace("https://api.openai.com/v1", proxied.openai.url)
        .replace("sk-...", "sk-readme-0123456789")
    )
    command = ["bash", "-c", curl.strip() + " --fail-with-body -sS"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    for (language, snippet), upstream in zip(
        [b for b in drop_in_blocks() if b[0] == "python"], (proxied.openai, proxied.anthropic), strict=True
    ):
        code = snippet.replace("http://127.0.0.1:8000", proxied.base).replace("ca_...", proxied.a.secret)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip() == "The backups run nightly at 02:00 UTC.", language
        assert FACTS[0][1] in upstream.system_prompt()
    assert proxied.openai.last.headers["authorization"] == "Bearer sk-readme-0123456789"

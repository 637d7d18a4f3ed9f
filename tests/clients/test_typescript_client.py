"""The TypeScript client (clients/typescript): its types against the schema, its node suite against a live
server, and its README example run as written from the package `npm pack` builds.

Node and npm come from the Debian packages (`.ci/run` installs them where missing); the dev
dependencies (TypeScript, openapi-typescript) come from the npm registry through `npm ci`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from apps.workspaces.models import Scope
from apps.workspaces.services import api_key_create, workspace_create
from tests.clients.live_data import Live
from tests.support.processes import ROOT

pytestmark = pytest.mark.server
PACKAGE = ROOT / "clients" / "typescript"
QUESTION = "Why did the retry worker overload Stripe?"


def npm(*args: str, cwd: Path = PACKAGE, timeout: float = 600) -> str:
    done = subprocess.run(["npm", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"npm {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="session")
def built() -> Path:
    """The package with its dev dependencies installed (`npm ci`, when the lock file changed) and compiled."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    assert not missing, f"{missing} not found: apt-get install nodejs npm (.ci/run does)"
    installed = PACKAGE / "node_modules" / ".package-lock.json"
    lock = PACKAGE / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        npm("ci", "--no-audit", "--no-fund")
    npm("run", "build")
    return PACKAGE


def test_the_generated_types_are_those_of_the_current_schema(built: Path, tmp_path: Path) -> None:
    """`src/schema.ts` is what `npm run types` makes of the schema now (run `make typescript-types`)."""
    schema = tmp_path / "openapi.json"
    schema.write_text(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    script = shlex.split(json.loads((built / "package.json").read_text())["scripts"]["types"])
    assert script[0] == "openapi-typescript" and script[-2:] == ["-o", "src/schema.ts"]
    out = tmp_path / "schema.ts"
    command = [str(built / "node_modules" / ".bin" / "openapi-typescript"), str(schema), *script[2:-2], "-o", str(out)]
    done = subprocess.run(command, cwd=built, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]

    assert out.read_text() == (built / "src" / "schema.ts").read_text(), (
        "clients/typescript/src/schema.ts differs from the schema: run `make typescript-types` and commit it"
    )


def test_the_node_suite_passes_against_a_live_server(built: Path, live: Live) -> None:
    # Admin keys: A's, for its archive, erasures and supersessions; an empty workspace's, to import into.
    admin = api_key_create(workspace=live.a.workspace, name="admin", scopes=list(Scope.values)).secret
    empty, _ = workspace_create(slug="acme-ts-copy")
    empty_admin = api_key_create(workspace=empty, name="admin", scopes=list(Scope.values)).secret
    env = {
        **os.environ,
        "CONTEXTARCH_URL": live.base,
        "CONTEXTARCH_API_KEY": live.a.secret,
        "CONTEXTARCH_ROOT_LAYER": str(live.a.root.pk),
        "CONTEXTARCH_OTHER_API_KEY": live.b.secret,
        "CONTEXTARCH_OTHER_ROOT_LAYER": str(live.b.root.pk),
        "CONTEXTARCH_ADMIN_API_KEY": admin,
        "CONTEXTARCH_EMPTY_ADMIN_API_KEY": empty_admin,
    }
    tests = sorted(str(p.relative_to(built)) for p in (built / "test").glob("*.test.mjs"))
    done = subprocess.run(
        ["node", "--test", "--test-reporter=spec", *tests],
        cwd=built,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = done.stdout + done.stderr
    print(report)  # the node runner's own account, shown with -s or on failure
    assert done.returncode == 0, report[-8000:]
    passed = re.search(r"^\S pass (\d+)$", report, flags=re.MULTILINE)
    assert passed and int(passed.group(1)) >= 10, report[-3000:]


def readme_example() -> str:
    (example,) = re.findall(r"```ts\n(.*?)```", (PACKAGE / "README.md").read_text(), flags=re.DOTALL)
    return str(example)


def test_the_readme_example_type_checks_and_runs_as_written_from_the_packed_package(
    built: Path, demo: tuple[str, str], tmp_path: Path
) -> None:
    base, key = demo
    packed = json.loads(npm("pack", "--json", "--pack-destination", str(tmp_path)))[0]
    assert {f["path"] for f in packed["files"]} >= {"dist/index.js", "dist/index.d.ts", "README.md", "package.json"}
    assert not any(f["path"].startswith(("src/", "test/", "node_modules/")) for f in packed["files"])
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "agent", "private": True, "type": "module"}))
    # The package has no runtime dependency: installing the tarball needs no registry.
    npm("install", "--offline", "--no-audit", "--no-fund", str(tmp_path / packed["filename"]), cwd=app)
    (app / "example.ts").write_text(readme_example())
    options = {"strict": True, "noEmit": True, "module": "nodenext", "target": "es2022", "lib": ["es2022", "dom"]}
    config = {"compilerOptions": {**options, "types": []}, "files": ["example.ts"]}
    (app / "tsconfig.json").write_text(json.dumps(config))
    tsc = ["node", str(built / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "tsconfig.json"]
    checked = subprocess.run(tsc, cwd=app, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout[-3000:]
    (app / "example.mjs").write_text(readme_example())

    env = {**os.environ, "CONTEXTARCH_URL": base, "CONTEXTARCH_API_KEY": key}
    done = subprocess.run(["node", "example.mjs"], cwd=app, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr[-3000:]
    assert "Stripe" in done.stdout and "Retry-After" in done.stdout

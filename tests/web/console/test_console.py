"""The developer console: developers and admins of the current workspace only, scoped to it; filters,
search, the readable trace, replay and the state dumps, in both page and HTMX modes."""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client, override_settings

from apps.assembly.models import AssemblyRecord
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.web.selectors.candidates import origin_of
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant
from tests.web.console.traces import assemble


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    layer = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=layer,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="document", content="Pinned: billing questions go to #billing.", pinned=True),
            *(ItemInput(kind="document", content=f"Billing note {n} about invoices.") for n in range(8)),
        ],
    )
    return layer


@pytest.fixture
def staff(client: Client, tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    """A developer of acme: the role opens the console, no global staff flag needed."""
    user = django_user_model.objects.create_user(username="grace", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.DEVELOPER)
    client.force_login(user)
    return client


URLS = [
    "/console/",
    "/console/traces/00000000-0000-0000-0000-000000000000/",
    "/console/state/",
    "/console/state/1/",
]


@pytest.mark.parametrize("url", URLS)
def test_it_sends_anonymous_visitors_to_the_login_page(client: Client, db: None, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize(("role", "is_staff"), [(Role.VIEWER, True), (Role.OPERATOR, True), (Role.OPERATOR, False)])
def test_it_forbids_members_below_developer_even_staff(
    client: Client, tenant: Tenant, project: Layer, django_user_model: type[AbstractUser], role: str, is_staff: bool
) -> None:
    user = django_user_model.objects.create_user(username="ada", password="x" * 12, is_staff=is_staff)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=role)
    trace_id = assemble(tenant, project, "billing")
    client.force_login(user)
    for url in ("/console/", f"/console/traces/{trace_id}/", "/console/state/", f"/console/state/{project.pk}/"):
        response = client.get(url)
        assert response.status_code == 403
        assert b"developer role" in response.content  # says who can grant it: this workspace's admins
    assert client.post(f"/console/traces/{trace_id}/replay/").status_code == 403
    assert b'href="/console/"' not in client.get("/").content  # no Console entry in the sidebar


@pytest.mark.parametrize("role", [Role.DEVELOPER, Role.ADMIN])
def test_developers_and_admins_open_their_workspaces_console_without_the_staff_flag(
    client: Client, tenant: Tenant, project: Layer, django_user_model: type[AbstractUser], role: str
) -> None:
    user = django_user_model.objects.create_user(username="dev", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=role)
    trace_id = assemble(tenant, project, "billing")
    client.force_login(user)
    for url in ("/console/", f"/console/traces/{trace_id}/", "/console/state/", f"/console/state/{project.pk}/"):
        assert client.get(url).status_code == 200, url
    assert client.post(f"/console/traces/{trace_id}/replay/").status_code == 200
    assert b'href="/console/"' in client.get("/").content


def test_a_developer_of_one_workspace_is_a_viewer_of_another_and_cannot_open_its_console(
    client: Client, tenant: Tenant, other_tenant: Tenant, django_user_model: type[AbstractUser]
) -> None:
    user = django_user_model.objects.create_user(username="dev", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.DEVELOPER)
    Membership.objects.create(workspace=other_tenant.workspace, user=user, role=Role.VIEWER)
    theirs = assemble(other_tenant, other_tenant.root, "shipping")
    client.force_login(user)
    assert client.post("/workspace/", {"workspace": other_tenant.workspace.slug}).status_code == 302
    assert client.get("/console/").status_code == 403
    assert client.get(f"/console/traces/{theirs}/").status_code == 403
    assert client.post("/workspace/", {"workspace": tenant.workspace.slug}).status_code == 302
    assert client.get("/console/").status_code == 200
    assert client.get(f"/console/traces/{theirs}/").status_code == 404  # acme's console knows no globex trace


def test_it_lists_only_the_current_workspaces_assemblies(
    staff: Client, tenant: Tenant, project: Layer, other_tenant: Tenant
) -> None:
    mine = assemble(tenant, project, "billing")
    theirs = assemble(other_tenant, other_tenant.root, "shipping")
    html = staff.get("/console/").content.decode()
    assert f"/console/traces/{mine}/" in html
    assert theirs not in html
    assert staff.get(f"/console/traces/{theirs}/").status_code == 404
    assert staff.get(f"/console/state/{other_tenant.root.pk}/").status_code == 404
    assert staff.post(f"/console/traces/{theirs}/replay/").status_code == 404


def test_it_finds_an_assembly_by_query_text_or_by_trace_id(staff: Client, tenant: Tenant, project: Layer) -> None:
    invoices = assemble(tenant, project, "when are invoices generated")
    other = assemble(tenant, project, "who answers billing questions")
    by_text = staff.get("/console/?q=INVOICES+generated").content.decode()
    assert invoices in by_text and other not in by_text
    by_id = staff.get(f"/console/?q={other}").content.decode()
    assert other in by_id and invoices not in by_id


def test_it_filters_by_layer_cached_partial_zone_and_time(staff: Client, tenant: Tenant, project: Layer) -> None:
    fresh = assemble(tenant, project, "invoices")
    assemble(tenant, project, "invoices")  # the same request again: an assembly-cache hit
    partial = assemble(tenant, project, "billing notes", timeout_ms=1)
    zoned = assemble(tenant, project, "billing", context_window=10_000, tokens_used=8_000)
    root = assemble(tenant, tenant.root, "invoices in the company")
    listed = lambda query: staff.get(f"/console/?{query}").context["page"].object_list  # noqa: E731
    cached = listed("cached=yes")
    assert len(cached) == 1 and cached[0].request["cached_from"] == fresh
    assert [str(r.trace_id) for r in listed("partial=yes")] == [partial]
    assert [str(r.trace_id) for r in listed("zone=conservative")] == [zoned]
    assert root not in {str(r.trace_id) for r in listed(f"layer={project.pk}")}
    assert len(listed("range=1h")) == 5
    assert list(listed("since=2000-01-01T00:00&until=2000-01-02T00:00")) == []


def test_it_shows_bad_filters_as_errors_beside_an_unfiltered_list(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    assemble(tenant, project, "invoices")
    response = staff.get("/console/?layer=abc&since=yesterday&cached=maybe")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Some filters were not understood" in html
    assert len(response.context["page"].object_list) == 1


def test_it_paginates_and_answers_htmx_with_the_list_only(staff: Client, tenant: Tenant, project: Layer) -> None:
    AssemblyRecord.objects.bulk_create(
        [
            AssemblyRecord(
                workspace=tenant.workspace,
                layer=project,
                request={"query": f"q{n}"},
                model="gpt-4o",
                encoding="o200k_base",
                tokens_used=10,
                token_budget=100,
                items_included=1,
                elapsed_ms=1.0,
            )
            for n in range(120)
        ]
    )
    first = staff.get("/console/")
    assert first.context["page"].paginator.num_pages == 3
    fragment = staff.get("/console/?page=2&q=q", HTTP_HX_REQUEST="true").content.decode().strip()
    # the list only: not the filters' form (the list's own "save as a question set" follows the filters)
    assert fragment.startswith('<section id="records"') and 'role="search"' not in fragment
    assert "page 2 of 3" in fragment
    assert 'hx-get="?q=q&amp;page=3"' in fragment and 'href="?q=q&amp;page=3"' in fragment


def test_it_lists_in_a_constant_number_of_queries(
    staff: Client, tenant: Tenant, project: Layer, django_assert_max_num_queries: object
) -> None:
    for n in range(8):
        assemble(tenant, project, f"topic {n}")
    # 14: the tags in use (the tag filter's choices) and the page's rows' tags are one query each.
    with django_assert_max_num_queries(14):  # type: ignore[operator]
        assert staff.get("/console/").status_code == 200
    for n in range(8, 30):
        assemble(tenant, project, f"topic {n}")
    with django_assert_max_num_queries(14):  # type: ignore[operator]
        assert staff.get("/console/").status_code == 200


def test_the_trace_shows_every_candidate_with_text_layer_source_parts_decision_and_timings(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    trace_id = assemble(tenant, project, "when are invoices generated", token_budget=60)
    response = staff.get(f"/console/traces/{trace_id}/")
    assert response.status_code == 200
    view = response.context["view"]
    record = AssemblyRecord.objects.get(trace_id=trace_id)
    assert len(view.rows) == record.candidates_considered
    first = view.rows[0]
    assert first.origin == "pinned" and first.excerpt.startswith("Pinned: billing questions")
    assert first.layer_name == "Billing"
    hit = next(row for row in view.rows if row.excerpt.startswith("Invoices are generated"))
    assert "keyword" in hit.origin and dict(hit.parts)["relevance"]
    assert any(row.decision_text == "left out: did not fit the token budget" for row in view.rows)
    assert any(row.decision_text.startswith("included at full") for row in view.rows)
    html = response.content.decode()
    for stage in ("resolve the request", "keyword search", "ranking", "packing"):
        assert stage in html
    assert 'id="trace-table"' in html


def test_a_cached_answer_links_to_the_trace_it_came_from_and_shows_its_decisions(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    original = assemble(tenant, project, "invoices")
    assemble(tenant, project, "invoices")
    hit = AssemblyRecord.objects.get(request__cached_from=original)
    response = staff.get(f"/console/traces/{hit.trace_id}/")
    html = response.content.decode()
    assert f'href="/console/traces/{original}/"' in html
    assert "Served from the assembly cache" in html
    assert len(response.context["view"].rows) == AssemblyRecord.objects.get(trace_id=original).candidates_considered


@override_settings(ASSEMBLY_CACHE_SECONDS=0)
def test_replay_runs_the_request_again_and_shows_the_difference(staff: Client, tenant: Tenant, project: Layer) -> None:
    trace_id = assemble(tenant, project, "when are invoices generated", token_budget=400)
    items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content="Invoices moved to 03:00 UTC.")])
    fragment = staff.post(f"/console/traces/{trace_id}/replay/", HTTP_HX_REQUEST="true").content.decode().strip()
    assert fragment.startswith('<section id="replay"')
    assert "Invoices moved to 03:00 UTC." in fragment and "added" in fragment
    page = staff.post(f"/console/traces/{trace_id}/replay/")
    assert page.status_code == 200 and b'id="trace-table"' in page.content
    assert AssemblyRecord.objects.count() == 3  # the original and two replays


def test_replay_of_a_deleted_layer_says_so(staff: Client, tenant: Tenant, project: Layer) -> None:
    trace_id = assemble(tenant, project, "invoices")
    project.delete()
    fragment = staff.post(f"/console/traces/{trace_id}/replay/", HTTP_HX_REQUEST="true").content.decode()
    assert "could not run again" in fragment and "layer_not_found" in fragment


def test_get_is_not_allowed_on_replay(staff: Client, tenant: Tenant, project: Layer) -> None:
    trace_id = assemble(tenant, project, "invoices")
    assert staff.get(f"/console/traces/{trace_id}/replay/").status_code == 405


def test_state_dumps_render_and_download_as_json(staff: Client, tenant: Tenant, project: Layer) -> None:
    page = staff.get("/console/state/").content.decode()
    assert 'id="schedule"' in page and "embed-pending-items" in page and 'href="?format=json"' in page
    download = staff.get("/console/state/?format=json")
    assert download["Content-Disposition"] == 'attachment; filename="state-acme.json"'
    dump = json.loads(download.content)
    assert dump["workspace"]["slug"] == "acme" and {row["name"] for row in dump["layers"]} >= {"Billing"}
    layer_page = staff.get(f"/console/state/{project.pk}/").content.decode()
    assert "Summary triggers" in layer_page and 'id="state-summaries"' in layer_page
    layer_dump = json.loads(staff.get(f"/console/state/{project.pk}/?format=json").content)
    assert layer_dump["layer"]["id"] == project.pk and layer_dump["items"]["total"] == 10


def test_an_unknown_trace_is_a_404(staff: Client, db: None) -> None:
    assert staff.get(f"/console/traces/{uuid.uuid4()}/").status_code == 404


def test_the_trace_table_shows_where_each_candidate_came_from(staff: Client, tenant: Tenant) -> None:
    session = layer_create(workspace=tenant.workspace, kind="session", name="Chat", parent=tenant.root)
    said = ["Hi there.", "We went to the Lisbon aquarium.", "What did the kids like?", "The otters.", "Next week?"]
    items_create(layer=session, items=[ItemInput(kind="message", role="user", content=text) for text in said])
    trace_id = assemble(tenant, session, "Lisbon aquarium")
    response = staff.get(f"/console/traces/{trace_id}/")
    origin = {row.excerpt: row.origin for row in response.context["view"].rows}
    assert origin["We went to the Lisbon aquarium."] == "keyword"
    assert origin["Hi there."] == origin["What did the kids like?"] == "neighbour"
    assert origin["The otters."] == origin["Next week?"] == "conversation"
    html = response.content.decode()
    assert '<th scope="col">Origin</th>' in html
    for name in ("keyword", "neighbour", "conversation"):
        assert f'<span class="badge origin-{name}">{name}</span>' in html


def test_a_pinned_candidate_found_by_a_search_is_marked_pinned_beside_its_origin(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    trace_id = assemble(tenant, project, "billing questions")
    response = staff.get(f"/console/traces/{trace_id}/")
    pinned = next(row for row in response.context["view"].rows if row.excerpt.startswith("Pinned: billing"))
    assert pinned.pinned and pinned.origin in ("keyword", "both", "vector")
    assert not any(row.pinned for row in response.context["view"].rows if row is not pinned)
    html = response.content.decode()
    assert (
        f'<span class="badge origin-{pinned.origin}">{pinned.origin}</span> <span class="badge pin-badge">pinned</span>'
        in html
    )


def test_a_cache_hit_shows_its_originals_zone_and_the_zone_filter_finds_it(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    zoned = assemble(tenant, project, "billing", context_window=10_000, tokens_used=8_000)
    assemble(tenant, project, "billing", context_window=10_000, tokens_used=8_000)  # served from the cache
    assemble(tenant, project, "invoices")
    hit = AssemblyRecord.objects.get(request__cached_from=zoned)
    assert "zone" not in hit.request
    rows = staff.get("/console/?zone=conservative").context["rows"]
    assert {(str(record.trace_id), zone) for record, zone, _tags in rows} == {
        (zoned, "conservative"),
        (str(hit.trace_id), "conservative"),
    }
    everything = {str(record.trace_id): zone for record, zone, _tags in staff.get("/console/").context["rows"]}
    assert everything[str(hit.trace_id)] == "conservative"
    assert set(everything.values()) == {"conservative", "normal"}


def test_a_partial_assembly_says_so_in_its_figures_beside_the_deadline_warning(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    partial = assemble(tenant, project, "billing notes", timeout_ms=1)
    whole = assemble(tenant, project, "invoices")
    html = staff.get(f"/console/traces/{partial}/").content.decode()
    assert '<dd id="trace-partial"><span class="badge warn">partial</span>' in html
    assert "deadline" in html
    assert '<dd id="trace-partial">no</dd>' in staff.get(f"/console/traces/{whole}/").content.decode()


def test_a_trace_recorded_before_origins_gets_the_best_guess() -> None:
    assert origin_of({"source": "item", "origin": "neighbour", "parts": {}}) == "neighbour"
    assert origin_of({"source": "item", "parts": {"vector_rank": 1, "keyword_rank": 4}}) == "both"
    assert origin_of({"source": "item", "parts": {"keyword_rank": 2, "pinned": 1}}) == "keyword"
    assert origin_of({"source": "item", "parts": {"pinned": 1}}) == "pinned"
    assert origin_of({"source": "community", "parts": {}}) == "community"
    assert origin_of({"source": "error_hint", "parts": {}}) == "hint"
    assert origin_of({"source": "item", "kind": "message", "parts": {}}) == "conversation"
    assert origin_of({"source": "item", "kind": "memory", "parts": {}}) == "related"


def test_it_finds_an_assembly_by_the_first_characters_of_its_trace_id_as_the_list_shows_them(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    invoices = assemble(tenant, project, "when are invoices generated")
    other = assemble(tenant, project, "who answers billing questions")
    for prefix in (invoices[:8], invoices[:8].upper(), invoices[:13]):
        rows = staff.get(f"/console/?q={prefix}").context["rows"]
        assert [str(record.trace_id) for record, _, _ in rows] == [invoices], prefix
    assert f"<code>{other[:8]}</code>" in staff.get("/console/").content.decode()  # what a developer copies
    assert [str(r.trace_id) for r, _, _ in staff.get("/console/?q=billing").context["rows"]] == [other]


@override_settings(WORKSPACE_MAX_CONCURRENT=1, WORKER_MAX_CONCURRENT=0, WORKSPACE_QUEUE_MS=20)
def test_a_replay_while_the_workspace_uses_its_share_says_so_and_works_after(
    staff: Client, tenant: Tenant, project: Layer
) -> None:
    from apps.core.fair_share import gate

    trace_id = assemble(tenant, project, "billing")
    slots = gate()
    assert slots.enter(workspace_id=tenant.workspace.pk, wait=0)  # an agent's request holds the share
    try:
        response = staff.post(f"/console/traces/{trace_id}/replay/")
    finally:
        slots.leave(workspace_id=tenant.workspace.pk)
    assert response.status_code == 200 and b"(overloaded)" in response.content
    assert b"(overloaded)" not in staff.post(f"/console/traces/{trace_id}/replay/").content


def test_an_overload_no_page_caught_is_a_429_page_with_retry_after(rf: object, db: None) -> None:
    from apps.core.errorpages import server_error
    from apps.core.errors import OVERLOADED, TooManyRequests

    for path, kind in (("/profiles/", "text/html"), ("/api/v1/items/", "application/json")):
        request = rf.get(path)  # type: ignore[attr-defined]
        try:
            raise TooManyRequests("this workspace already runs its share", retry_after=1, code=OVERLOADED)
        except TooManyRequests:
            response = server_error(request)  # Django's 500 handler, called while the exception is handled
        assert response.status_code == 429 and response["Retry-After"] == "1"
        assert response["Content-Type"].startswith(kind)

"""The preview page: the request in the URL, the what-if table, the token split, markers, the overflow,
partial answers, errors as form errors, and the session-authenticated stream."""

from __future__ import annotations

from html import unescape
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import AbstractUser
from django.template.defaultfilters import floatformat
from django.test import Client

from apps.assembly.models import AssemblyRecord
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from tests.assembly.streams import sse_events
from tests.patterns_data import missing_table_pattern
from tests.support.tenants import Tenant

PASSWORD = "correct horse battery"


@pytest.fixture
def signed_in(client: Client, tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    user = django_user_model.objects.create_user(username="ada", password=PASSWORD)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.VIEWER)
    client.force_login(user)
    return client


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Billing retries failed card payments three times."),
            ItemInput(kind="spec", type="requirement", content="Every invoice carries the customer's VAT number."),
            ItemInput(kind="document", content="Pinned: billing questions go to the #billing channel.", pinned=True),
            *(
                ItemInput(kind="document", content=f"Billing note {n}: invoices for region {n} are sent in batches.")
                for n in range(12)
            ),
        ],
    )
    return project


def url(layer: Layer, **overrides: object) -> str:
    params = {"layer": layer.pk, "query": "invoices billing", "token_budget": 120, "timeout_ms": 0, **overrides}
    return "/preview/?" + urlencode(params, doseq=True)


def test_it_shows_an_empty_form_with_the_linked_layer_selected_and_runs_nothing(
    signed_in: Client, project: Layer
) -> None:
    response = signed_in.get(f"/preview/?layer={project.pk}")
    html = response.content.decode()
    assert response.status_code == 200
    assert f'<option value="{project.pk}" selected>' in html
    assert 'method="get"' in html and 'hx-get="/preview/"' in html and 'hx-push-url="true"' in html
    assert not AssemblyRecord.objects.exists()


def test_the_request_in_the_url_renders_the_whole_preview_so_a_reload_shows_it_again(
    signed_in: Client, project: Layer
) -> None:
    first = signed_in.get(url(project)).content.decode()
    again = signed_in.get(url(project)).content.decode()
    for html in (first, again):
        assert "<html" in html
        assert 'id="chunk-table"' in html and "Invoices are generated nightly" in html
        assert "invoices billing</textarea>" in html  # the form keeps the request


def test_htmx_gets_only_the_result_fragment(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(url(project), HTTP_HX_REQUEST="true")
    html = response.content.decode().strip()
    assert html.startswith('<section id="preview-result"')
    assert "<form" not in html and "<html" not in html
    assert "HX-Request" in response["Vary"]


def test_the_what_if_rows_link_to_the_same_request_at_their_budget(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(url(project, token_budget=2000))
    view = response.context["view"]
    assert [row.token_budget for row in view.what_if] == [1000, 2000, 4000, 8000]
    assert [row.current for row in view.what_if] == [False, True, False, False]
    link = view.what_if[0].url
    assert "token_budget=1000" in link and "query=invoices+billing" in link and f"layer={project.pk}" in link
    html = response.content.decode()
    assert f'hx-get="{link.replace("&", "&amp;")}"' in html
    switched = signed_in.get("/preview/" + link, HTTP_HX_REQUEST="true")
    assert "</strong> of 1000 tokens" in switched.content.decode()


def test_the_token_bar_splits_by_kind_and_layer_and_adds_up(signed_in: Client, project: Layer) -> None:
    view = signed_in.get(url(project, token_budget=2000)).context["view"]
    kinds = {segment.key: segment.tokens for segment in view.by_kind}
    assert {"memory", "document"} <= set(kinds)
    assert sum(kinds.values()) == sum(chunk["tokens"] for chunk in view.chunks)
    assert sum(segment.tokens for segment in view.by_layer) == sum(kinds.values())
    assert view.by_kind[1].x == pytest.approx(view.by_kind[0].x + view.by_kind[0].width, abs=0.01)


def test_a_pinned_chunk_is_marked_and_explains_its_place(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(url(project, token_budget=2000))
    view = response.context["view"]
    assert view.chunks[0]["pinned"] and view.chunks[0]["marker"] == "pinned"
    html = response.content.decode()
    assert 'class="badge pin-badge">pinned<' in html
    assert "Pinned chunks and known fixes go first whatever their score" in html


def test_the_overflow_lists_what_was_left_out_and_why(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(url(project, token_budget=120))
    view = response.context["view"]
    assert view.result["overflow"]["count"] == len(view.overflow) > 0
    assert all(row.reason in ("over_budget", "over_limit") for row in view.overflow)
    html = response.content.decode()
    assert f"Left out: +{len(view.overflow)} more available" in html
    assert 'id="overflow-table"' in html and "did not fit the token budget" in html
    assert "Billing note" in html.split('id="overflow-table"')[1]  # the text, not an id


def test_a_partial_answer_is_labelled_with_its_real_elapsed_time(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(url(project, timeout_ms=1))  # a 1 ms deadline passes at once
    view = response.context["view"]
    assert view.result["partial"]
    html = response.content.decode()
    assert 'id="partial-notice"' in html
    # As the page rounds it (half up: 6.5 ms is "7", where Python's format gives "6", and failed once).
    assert f"the deadline passed after {floatformat(view.result['elapsed_ms'], 0)} ms" in html


@pytest.mark.parametrize("budget", ["0", "-5", "abc", "99999999999"])
@pytest.mark.parametrize("htmx", [False, True])
def test_a_bad_budget_is_a_form_error_not_a_500(signed_in: Client, project: Layer, budget: str, htmx: bool) -> None:
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = signed_in.get(url(project, token_budget=budget), **headers)
    assert response.status_code == 200
    html = response.content.decode()
    assert "The context could not be assembled" in html and "Token budget:" in html
    assert 'id="chunk-table"' not in html


def test_a_service_refusal_is_a_form_error(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(url(project, query="  "), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert b"(missing_query)" in response.content


@pytest.mark.parametrize(("field", "value"), [("timeout_ms", 60_001), ("error", "x" * 20_001)])
def test_a_value_the_api_refuses_is_a_form_error_with_the_apis_message_and_code(
    signed_in: Client, tenant: Tenant, project: Layer, field: str, value: object
) -> None:
    body = {"layer": project.pk, "query": "invoices billing", "token_budget": 120, "timeout_ms": 0, field: value}
    api = tenant.client.post("/api/v1/context/", body, format="json")
    assert api.status_code == 400
    error = api.json()["error"]
    response = signed_in.get(url(project, **{field: value}), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert f"{error['message']} ({error['code']})" in unescape(response.content.decode())
    assert not AssemblyRecord.objects.filter(workspace=tenant.workspace).exists()


def test_a_layer_of_another_workspace_is_refused(signed_in: Client, project: Layer, other_tenant: Tenant) -> None:
    response = signed_in.get(url(other_tenant.root), HTTP_HX_REQUEST="true")
    assert b"Select a valid choice" in response.content
    assert not AssemblyRecord.objects.filter(workspace=other_tenant.workspace).exists()


def test_the_stream_sends_one_chunk_event_per_chunk_then_complete(signed_in: Client, project: Layer) -> None:
    query = urlencode({"layer": project.pk, "query": "invoices billing", "token_budget": 400, "timeout_ms": 0})
    response = signed_in.get(f"/preview/stream/?{query}")
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    events = sse_events(response)  # type: ignore[arg-type]
    kinds = [kind for kind, _ in events]
    assert events[0] == ("progress", {"state": "assembling"})  # sent before the assembly, so the page knows
    assert kinds[-1] == "complete" and set(kinds[1:-1]) == {"chunk"}
    complete = events[-1][1]
    assert complete["total_chunks"] == len(kinds) - 2 > 0
    assert complete["total_tokens"] <= 400


def test_the_stream_answers_bad_input_with_the_apis_error_and_status(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(f"/preview/stream/?layer={project.pk}&query=x&token_budget=abc")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_token_budget"
    missing = signed_in.get("/preview/stream/?layer=999999&query=x")  # found by the assembly, after the start
    assert sse_events(missing) == [  # type: ignore[arg-type]
        ("progress", {"state": "assembling"}),
        (
            "error",
            {"error": {"code": "layer_not_found", "message": "layer 999999 not found", "details": {}}, "status": 404},
        ),
    ]
    assert not AssemblyRecord.objects.exists()


def test_the_stream_refuses_an_unknown_field_with_the_apis_400(signed_in: Client, project: Layer) -> None:
    response = signed_in.get(f"/preview/stream/?layer={project.pk}&query=x&bogus=1")
    assert response.status_code == 400  # was a 500: UnknownFields is a DomainError, not a ValidationError
    error = response.json()["error"]
    assert error["code"] == "unknown_fields" and error["details"]["fields"] == ["bogus"]
    assert not AssemblyRecord.objects.exists()


def test_the_stream_needs_a_signed_in_member(client: Client, project: Layer) -> None:
    response = client.get(f"/preview/stream/?layer={project.pk}&query=x")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_agents_error_brings_its_known_fix_first_marked_as_such(
    signed_in: Client, tenant: Tenant, project: Layer
) -> None:
    missing_table_pattern(tenant.workspace)
    error = 'psycopg.errors.UndefinedTable: relation "invoices" does not exist'
    response = signed_in.get(url(project, token_budget=400, error=error))
    view = response.context["view"]
    assert view.hint_count == 1
    html = response.content.decode()
    rows = html.split('id="chunk-table"', 1)[1].split("</tbody>", 1)[0].split("</tr>")[1:]
    pinned, hint = rows[0], rows[1]  # pinned chunks, then known fixes, then the rest by score
    assert "pin-badge" in pinned
    assert '<span class="badge marker-badge">known fix</span>' in hint and "migrate" in hint
    assert "does not exist</textarea>" in html  # the error stays in the form (and the address)
    plain = signed_in.get(url(project, token_budget=400)).context["view"]
    assert plain.hint_count == 0

"""End to end: items in layers → summarize → the context API includes the layer summaries."""

from __future__ import annotations

from tests.summaries.helpers import COMPANY_FACTS, TEAM_FACTS, facts, tree
from tests.support.tenants import Tenant


def test_generated_summaries_reach_the_assembled_context(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.company, COMPANY_FACTS)
    facts(t.team, TEAM_FACTS)
    body = {"layer": t.project.pk, "query": "incident commander", "token_budget": 3000, "format": "text"}
    before = tenant.client.post("/api/v1/context/", body, format="json").json()
    assert not [c for c in before["chunks"] if c["source"] == "summary"]
    for layer in (t.team, t.org, t.company):
        assert tenant.client.post(f"/api/v1/layers/{layer.pk}/summarize/", format="json").status_code == 200
    after = tenant.client.post("/api/v1/context/", body, format="json").json()
    summaries = {c["layer"]: c for c in after["chunks"] if c["source"] == "summary"}
    assert set(summaries) == {t.team.pk, t.org.pk, t.company.pk}
    # The company's fact about the incident commander is in the context itself, so its summary does not
    # repeat that sentence (a summary never duplicates text already in the context, issue 20).
    assert summaries[t.company.pk]["depth"] == "detailed" and "incident commander" in after["context"]
    items = " ".join(c["text"] for c in after["chunks"] if c["source"] == "item")
    assert "incident commander" in items and "incident commander" not in summaries[t.company.pk]["text"]
    assert after["total_tokens"] <= 3000
    narrow = tenant.client.post("/api/v1/context/", {**body, "token_budget": 60}, format="json").json()
    assert narrow["total_tokens"] <= 60 and any(c["source"] == "summary" for c in narrow["chunks"])

"""The keyword ranking check: keyword search's ids for every bench question, saved once and compared later.

Keyword search's bound past its match cap changes which matches are scored; at a size below that
bound the ids must not change. The first run writes each question's ids (best first) to a JSON file;
a later run over the same workspace compares its ids with them and says how many are identical.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from apps.bench.assembly.corpus import QUESTIONS, SUBJECTS
from apps.layers.filters import ItemFilters
from apps.layers.keyword_search import keyword_items
from apps.layers.models import Layer


@dataclass(frozen=True)
class KeywordCheck:
    questions: int
    identical: int
    same_set: int  # the same ids in another order
    saved: bool  # True: no earlier ids, this run's were written


def keyword_ids(*, workspace_id: int) -> dict[str, list[int]]:
    """Each bench question's keyword ids (RETRIEVAL_CANDIDATES of them, best first) over every layer."""
    layers = tuple(Layer.objects.filter(workspace_id=workspace_id).order_by("pk").values_list("pk", flat=True))
    filters = ItemFilters(workspace_id=workspace_id, layer_ids=layers)
    limit = settings.RETRIEVAL_CANDIDATES
    questions = [q.format(s=s) for q in QUESTIONS for s in SUBJECTS]
    return {q: [h.item_id for h in keyword_items(filters=filters, query=q, limit=limit)] for q in questions}


def keyword_check(*, workspace_id: int, path: Path) -> KeywordCheck:
    """Compare this run's ids with those saved at `path`, or save them there when there are none."""
    found = keyword_ids(workspace_id=workspace_id)
    if not path.exists():
        path.write_text(json.dumps(found, indent=1) + "\n")
        return KeywordCheck(questions=len(found), identical=len(found), same_set=len(found), saved=True)
    saved: dict[str, list[int]] = json.loads(path.read_text())
    asked = [q for q in found if q in saved]
    return KeywordCheck(
        questions=len(asked),
        identical=sum(found[q] == saved[q] for q in asked),
        same_set=sum(set(found[q]) == set(saved[q]) for q in asked),
        saved=False,
    )

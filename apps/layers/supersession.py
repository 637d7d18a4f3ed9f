"""Superseded items: a newer item replaces older ones, named by its writer or proposed by a detector.

- On write an item may name the items it supersedes (`supersedes: [ids]`, any layer of the workspace):
  they get `superseded_by`, leave contexts by default (trace reason "superseded", with the id that
  replaced them) and stay listed, searchable by the history tool and usable with `include_superseded`.
- The detector runs when the embedder has stored new vectors (`proposals_detect`), for each pair of a new
  item and an older one whichever of the two was embedded first. With an LLM configured,
  it asks the LLM (the judge summaries registers: apps/layers/supersession_judge.py) whether the new item
  supersedes any of its nearest older items (cosine at least `SUPERSESSION_JUDGE_SIMILARITY`); when the
  LLM fails or the day's budget is spent, or with no LLM, the rules decide. The rule-based detector: for a
  new item it proposes each older item of the same layer, kind and type that is about the same subject
  (the same first content word: "Alice lives in Paris" / "Alice moved to Berlin"; not "Bob lives in
  Paris"), close in meaning (cosine at least `SUPERSESSION_SIMILARITY`) and yet not a near duplicate
  (below `duplicates.DUPLICATE_SIMILARITY`, or other figures), newer than it. An operator accepts or
  rejects each proposal (the layer page, `/api/v1/supersessions/`); nothing is superseded unasked.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.errors import Conflict, NotFound
from apps.core.versions import content_changed
from apps.layers.duplicates import DUPLICATE_SIMILARITY, figures
from apps.layers.errors import ITEM_NOT_FOUND, PROPOSAL_DECIDED
from apps.layers.models import Detector, Item, ProposalState, SupersessionProposal
from apps.layers.supersession_judge import Candidate, Judge, JudgeFailed, Question, Statement, judge_current

# At or above this cosine (multilingual-e5-small, layer name in front) two statements of one layer with
# one subject say something about the same thing: "Alice lives in Paris" / "Alice moved to Berlin" are
# 0.885-0.903 under three layer names, "... / Alice's manager is Carol" 0.849-0.878, unrelated facts
# 0.75-0.89 (the subject rule keeps those apart).
SUPERSESSION_SIMILARITY = 0.88
# A judge (the configured LLM) is asked about neighbours from this cosine on, without the subject rule:
# it tells "Alice's manager is Carol" (0.849-0.878 beside "Alice lives in Paris") from a replacement.
SUPERSESSION_JUDGE_SIMILARITY = 0.84
CANDIDATES_PER_ITEM = 5
log = logging.getLogger(__name__)
_WORD = re.compile(r"[^\W\d_]+")
_LEADING = frozenset(
    "a an the this that these those our your my their his her its we they i you it there here "
    "now today currently also then so and but".split()
)


def subject(text: str) -> str:
    """The first content word of `text`, lowercased and without a plural s: a cheap stand-in for the
    statement's subject ("Our CI moved ..." → "ci", "Deploys are frozen ..." → "deploy")."""
    for word in _WORD.findall(text.lower()):
        if word not in _LEADING:
            return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
    return ""


def supersedes_check(*, workspace_id: int, ids: Sequence[int]) -> None:
    """Refuse ids that are not items of the workspace (404 `item_not_found`, every missing id named)."""
    wanted = set(ids)
    found = set(Item.objects.filter(workspace_id=workspace_id, pk__in=wanted).values_list("pk", flat=True))
    missing = sorted(wanted - found)
    if missing:
        raise NotFound(f"item {missing[0]} not found", code=ITEM_NOT_FOUND, details={"supersedes": missing})


def items_supersede(*, new: Item, old_ids: Sequence[int], decided_by: str = "") -> int:
    """Mark `old_ids` (items of `new`'s workspace) as superseded by `new`; their pending proposals
    against `new` are accepted with it. Returns how many items changed."""
    ids = [i for i in dict.fromkeys(old_ids) if i != new.pk]
    if not ids:
        return 0
    with transaction.atomic():
        changed = (
            Item.objects.filter(workspace_id=new.workspace_id, pk__in=ids)
            .exclude(superseded_by_id=new.pk)
            .update(superseded_by_id=new.pk)
        )
        # A newer item that the old ones superseded cannot be superseded by its own successor's chain.
        Item.objects.filter(pk=new.pk, superseded_by_id__in=ids).update(superseded_by_id=None)
        SupersessionProposal.objects.filter(new=new, old_id__in=ids, state=ProposalState.PENDING).update(
            state=ProposalState.ACCEPTED, decided_at=timezone.now(), decided_by=decided_by
        )
        content_changed(new.workspace_id)
    return changed


def proposal_decide(*, proposal: SupersessionProposal, accept: bool, decided_by: str) -> SupersessionProposal:
    """Accept (the old item is superseded by the new one) or reject a pending proposal; a decided
    one is a 409 `proposal_decided`."""
    with transaction.atomic():
        locked = SupersessionProposal.objects.select_for_update().get(pk=proposal.pk)
        if locked.state != ProposalState.PENDING:
            raise Conflict(f"this proposal was {locked.state} already", code=PROPOSAL_DECIDED)
        locked.state = ProposalState.ACCEPTED if accept else ProposalState.REJECTED
        locked.decided_at = timezone.now()
        locked.decided_by = decided_by[:200]
        locked.save(update_fields=["state", "decided_at", "decided_by"])
        if accept:
            items_supersede(new=locked.new, old_ids=[locked.old_id], decided_by=decided_by)
    return locked


# The older items of the same layer, kind and type nearest to each new item (not superseded, not messages).
# (new id, old id, similarity): each item just embedded with its nearest older items, and as the older
# side, with the nearest newer items embedded before it (concurrent embedding runners, or a backlog
# embedded newest first, store a newer item's vector before an older one's).
_NEIGHBOURS_SQL = """
SELECT n.id, o.id, 1 - (o.embedding <=> n.embedding)
FROM layers_item n CROSS JOIN LATERAL (
    SELECT o.id, o.embedding FROM layers_item o
    WHERE o.layer_id = n.layer_id AND o.kind = n.kind AND o.type = n.type AND o.id <> n.id
      AND o.created_at <= n.created_at AND o.embedding IS NOT NULL AND o.superseded_by_id IS NULL
      AND o.content_hash <> n.content_hash
    ORDER BY o.embedding <=> n.embedding LIMIT %(per_item)s
) o
WHERE n.id = ANY(%(ids)s::bigint[]) AND n.embedding IS NOT NULL AND n.kind <> 'message'
  AND n.superseded_by_id IS NULL
UNION ALL
SELECT o.id, n.id, 1 - (o.embedding <=> n.embedding)
FROM layers_item n CROSS JOIN LATERAL (
    SELECT o.id, o.embedding FROM layers_item o
    WHERE o.layer_id = n.layer_id AND o.kind = n.kind AND o.type = n.type AND NOT o.id = ANY(%(ids)s::bigint[])
      AND o.created_at > n.created_at AND o.embedding IS NOT NULL AND o.superseded_by_id IS NULL
      AND o.content_hash <> n.content_hash
    ORDER BY o.embedding <=> n.embedding LIMIT %(per_item)s
) o
WHERE n.id = ANY(%(ids)s::bigint[]) AND n.embedding IS NOT NULL AND n.kind <> 'message'
  AND n.superseded_by_id IS NULL
"""


Found = tuple[Item, float, str, str]  # (old item, similarity, reason, detector)


def proposals_detect(*, ids: Sequence[int]) -> list[SupersessionProposal]:
    """Propose supersessions for the newly embedded items `ids`: the configured judge decides among each
    item's neighbours when there is one, else the rules (this module's docstring). Once the judge fails,
    the rules decide for the rest of the batch: a down LLM costs one attempt per batch, not per item."""
    if not ids:
        return []
    floor = min(SUPERSESSION_SIMILARITY, SUPERSESSION_JUDGE_SIMILARITY)
    with connection.cursor() as cursor:
        cursor.execute(_NEIGHBOURS_SQL, {"per_item": CANDIDATES_PER_ITEM, "ids": list(ids)})
        pairs = [(new, old, float(similarity)) for new, old, similarity in cursor.fetchall()]
    pairs = [p for p in pairs if p[2] >= floor]
    if not pairs:
        return []
    rows = Item.objects.in_bulk({i for new, old, _ in pairs for i in (new, old)})
    neighbours: dict[int, list[tuple[Item, float]]] = {}
    for new_id, old_id, similarity in pairs:
        new, old = rows.get(new_id), rows.get(old_id)
        if new is None or old is None:
            continue
        new_text, old_text = f"{new.title}\n{new.content}", f"{old.title}\n{old.content}"
        if similarity >= DUPLICATE_SIMILARITY and figures(new_text) == figures(old_text):
            continue  # a near duplicate: the duplicates' rule merges it, it replaces nothing
        neighbours.setdefault(new_id, []).append((old, similarity))
    judge, failed = judge_current(), ""
    made: list[SupersessionProposal] = []
    for new_id, candidates in neighbours.items():
        new = rows[new_id]
        found: list[Found] | None = None
        if judge is not None and not failed:
            try:
                found = _judged(judge, new, candidates)
            except JudgeFailed as exc:
                failed = exc.reason
                log.warning("supersession judge failed for item %s (%s): the rules decide this batch", new_id, failed)
        if found is None:
            found = _by_rules(new, candidates, fallback=failed)
        made.extend(p for p in (_propose(new, *f) for f in found) if p is not None)
    return made


def _judged(judge: Judge, new: Item, candidates: list[tuple[Item, float]]) -> list[Found] | None:
    """The judge's proposals among the candidates close enough to ask about; None: no judge configured."""
    asked = [(old, similarity) for old, similarity in candidates if similarity >= SUPERSESSION_JUDGE_SIMILARITY]
    if not asked:
        return []
    question = Question(
        workspace_id=new.workspace_id,
        new=_statement(new),
        candidates=tuple(Candidate(statement=_statement(old), similarity=s) for old, s in asked),
    )
    judgement = judge(question)
    if judgement is None:
        return None
    by_id = {old.pk: (old, similarity) for old, similarity in asked}
    return [
        (*by_id[verdict.old_id], verdict.reason, judgement.detector)
        for verdict in judgement.verdicts
        if verdict.old_id in by_id
    ]


def _statement(item: Item) -> Statement:
    return Statement(
        id=item.pk, kind=item.kind, type=item.type, title=item.title, content=item.content, created_at=item.created_at
    )


def _by_rules(new: Item, candidates: list[tuple[Item, float]], *, fallback: str = "") -> list[Found]:
    """The rule-based detector: the same subject and a similarity of at least `SUPERSESSION_SIMILARITY`;
    `fallback` (why the judge did not decide) is stated in each reason."""
    found: list[Found] = []
    for old, similarity in candidates:
        same_subject = subject(new.title or new.content) == subject(old.title or old.content) != ""
        if similarity < SUPERSESSION_SIMILARITY or not same_subject:
            continue
        reason = (
            f"same {new.kind}{'/' + new.type if new.type else ''} and subject ({subject(new.content)!r}), "
            f"similarity {similarity:.3f}, newer and worded otherwise"
        )
        if fallback:
            reason = f"{reason}; rule-based because {fallback}"
        found.append((old, similarity, reason, Detector.RULES))
    return found


def _propose(new: Item, old: Item, similarity: float, reason: str, detector: str) -> SupersessionProposal | None:
    """Store the proposal unless this pair has one already (any state: a rejected pair is not asked again)."""
    try:
        with transaction.atomic():
            proposal, created = SupersessionProposal.objects.get_or_create(
                old=old,
                new=new,
                defaults={
                    "workspace_id": new.workspace_id,
                    "layer_id": new.layer_id,
                    "similarity": similarity,
                    "reason": reason[:300],
                    "detector": detector,
                },
            )
    except IntegrityError:  # a concurrent detector made it first
        return None
    return proposal if created else None

"""The turns said just before and just after a message, in its own layer: `ADJACENT_SQL`, a CTE of
the one statement that also fetches the neighbours' rows (retrieval.py _add_neighbour_turns).

Conversations written without `parent` links (a client loading a transcript) still have an
order: `created_at`, then id. Questions are often answered by the turn next to the one that
matches them ("What did you name him?" → "Biscuit."); on the LoCoMo development set bringing the
neighbours of the top hits is worth +0.05 to +0.09 recall at 500-1,000 tokens.
"""

from __future__ import annotations

# Hits this high in either search bring their neighbours (more brings turns that cost budget
# and rarely hold evidence)...
NEIGHBOUR_SEED_RANK = 5
# ...unless the budget holds more than the top hits and their neighbours: then one hit more per
# this many tokens brings its neighbours (20 at 4,000 tokens).
TOKENS_PER_SEED = 200


def neighbour_seed_rank(budget: int) -> int:
    """How high in either search a hit must be to bring its neighbours, for a context of `budget` tokens."""
    return max(NEIGHBOUR_SEED_RANK, budget // TOKENS_PER_SEED)


# (neighbour id, seed id) for the messages among the seeds (params: workspace id, the seed ids as an
# array literal, filters.id_array); a turn next to two seeds comes twice, and the first row's seed is
# the one it is the neighbour of.
ADJACENT_SQL = """
    SELECT n.id, h.id FROM layers_item h
    CROSS JOIN LATERAL (
        (SELECT p.id FROM layers_item p
         WHERE p.workspace_id = h.workspace_id AND p.layer_id = h.layer_id AND p.kind = 'message'
               AND (p.created_at, p.id) < (h.created_at, h.id)
         ORDER BY p.created_at DESC, p.id DESC LIMIT 1)
        UNION ALL
        (SELECT p.id FROM layers_item p
         WHERE p.workspace_id = h.workspace_id AND p.layer_id = h.layer_id AND p.kind = 'message'
               AND (p.created_at, p.id) > (h.created_at, h.id)
         ORDER BY p.created_at, p.id LIMIT 1)
    ) n
    WHERE h.workspace_id = %s AND h.id = ANY(%s::bigint[]) AND h.kind = 'message'
"""

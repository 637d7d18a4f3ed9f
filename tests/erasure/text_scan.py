"""Where a phrase is kept: every text, varchar and JSON column of every table, scanned for it."""

from __future__ import annotations

from django.db import connection


def text_columns() -> list[tuple[str, str]]:
    """(table, column) of every text, varchar and JSON column of the database's tables."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
            "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' "
            "AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'tsvector')"
        )
        return [(row[0], row[1]) for row in cur.fetchall()]


def hits(phrase: str) -> list[str]:
    """`table.column` of every value that holds the phrase (any case); a tsvector by its lexemes."""
    found = []
    words = [w.lower() for w in phrase.split()]
    with connection.cursor() as cur:
        for table, column in text_columns():
            cur.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%{phrase}%"])
            count = cur.fetchone()[0]
            if count == 0 and words:  # a tsvector keeps stems: 'quokka':3 'marmalad':4 ...
                cur.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%'{words[0]}'%"])
                count = cur.fetchone()[0]
            if count:
                found.append(f"{table}.{column}")
    return sorted(found)

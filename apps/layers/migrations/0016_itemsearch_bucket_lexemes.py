from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models

# Each lexeme of an item tagged with its workspace and its bucket of 4,096 ids (item_id >> 12):
# 'bill 3 244'. keyword_search.py matches a common word in a window of the newest buckets by these
# keys (keyword_search.BUCKET_BITS must stay 12). A lexeme has no space (the parser splits on them).
FUNCTION = """
CREATE OR REPLACE FUNCTION itemsearch_bucket_lexemes(vector tsvector, workspace bigint, item bigint)
RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_agg(lexeme || ' ' || workspace || ' ' || (item >> 12))
    FROM unnest(pg_catalog.tsvector_to_array(vector)) AS lexeme
$$
"""


class Migration(migrations.Migration):
    # The index is built without a write lock on layers_itemsearch (CREATE INDEX CONCURRENTLY).
    atomic = False

    dependencies = [
        ("layers", "0015_itemsearch_workspace_item"),
    ]

    operations = [
        # No parallel scans of the search table: the keyword statements read a few thousand rows, and two
        # workers started per statement cost more CPU than they save (a windowed statement at 1M items,
        # planned parallel on the bucket index's estimate: 23 ms of CPU against 11 ms alone).
        migrations.RunSQL(
            "ALTER TABLE layers_itemsearch SET (parallel_workers = 0)",
            "ALTER TABLE layers_itemsearch RESET (parallel_workers)",
        ),
        migrations.RunSQL(FUNCTION, "DROP FUNCTION itemsearch_bucket_lexemes(tsvector, bigint, bigint)"),
        AddIndexConcurrently(
            model_name="itemsearch",
            index=GinIndex(
                models.Func(
                    models.F("search_vector"),
                    models.F("workspace_id"),
                    models.F("item_id"),
                    function="itemsearch_bucket_lexemes",
                    output_field=ArrayField(models.TextField()),
                ),
                name="itemsearch_bucket_lexeme_gin",
                fastupdate=False,
            ),
        ),
    ]

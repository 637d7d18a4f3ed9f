"""Statistics for the keyword-search copy right after it is filled (0009).

Keyword search past its match cap picks the query's rarest words from the copy's lexeme
statistics (apps/layers/keyword_search.py); until autovacuum analyzes the new table it finds none
and scores every match, about twice the work a request at 100k items.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("layers", "0009_item_search_table")]

    operations = [migrations.RunSQL("ANALYZE layers_itemsearch", reverse_sql=migrations.RunSQL.noop)]

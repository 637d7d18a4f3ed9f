from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built without a write lock on layers_itemsearch (about a second per million rows).
    atomic = False

    dependencies = [
        ("layers", "0014_duplicates_supersession"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="itemsearch",
            index=models.Index(fields=["workspace_id", "item_id"], name="itemsearch_workspace_item"),
        ),
    ]

# ItemAccess is the conversation graph's access counts: the model moves to apps.conversations, its
# table stays. State only: nothing is copied, no lock is taken (conversations 0002 takes the model up
# with db_table).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('layers', '0012_layerconfig_to_summaries'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='ItemAccess')],
            database_operations=[],
        ),
    ]

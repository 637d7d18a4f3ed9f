# LayerConfig is the summaries' configuration: the model moves to apps.summaries, its table stays.
# State only: nothing is copied, no lock is taken (summaries 0005 takes the model up with db_table).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('layers', '0011_embedding_space'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='LayerConfig')],
            database_operations=[],
        ),
    ]

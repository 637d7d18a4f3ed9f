# The assembly rollups and their watermarks are assembly's (assembly 0007 took them up with their
# tables' names): this app lets them go. State only: no table is dropped, no lock is taken.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('assembly', '0007_rollups_from_web'),
        ('web', '0002_assembly_rollups'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='AssemblyRollup'),
                migrations.DeleteModel(name='AssemblyRollupCount'),
                migrations.DeleteModel(name='RollupWatermark'),
            ],
            database_operations=[],
        ),
    ]

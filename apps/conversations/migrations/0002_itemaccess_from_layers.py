# ItemAccess moves here from apps.layers (layers 0013 let it go): state only, the table keeps its
# name (`layers_itemaccess`), so no row is copied and no lock is taken. The content type follows the
# model, so admin history and permissions stay attached to it.

import django.db.models.deletion
from django.db import migrations, models


def relabel(apps, *, old, new):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    if not ContentType.objects.filter(app_label=new, model='itemaccess').exists():
        ContentType.objects.filter(app_label=old, model='itemaccess').update(app_label=new)


def forwards(apps, schema_editor):
    relabel(apps, old='layers', new='conversations')


def backwards(apps, schema_editor):
    relabel(apps, old='conversations', new='layers')


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('conversations', '0001_initial'),
        ('layers', '0013_itemaccess_to_conversations'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ItemAccess',
                    fields=[
                        ('item', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='access', serialize=False, to='layers.item')),
                        ('access_count', models.PositiveIntegerField(default=0)),
                        ('last_accessed_at', models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        'db_table': 'layers_itemaccess',
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]

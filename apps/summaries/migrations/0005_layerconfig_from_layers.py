# LayerConfig moves here from apps.layers (layers 0012 let it go): state only, the table keeps its
# name (`layers_layerconfig`), so no row is copied and no lock is taken. The content type follows the
# model, so admin history and permissions stay attached to it.

import django.db.models.deletion
from django.db import migrations, models


def relabel(apps, schema_editor, *, old, new):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    if not ContentType.objects.filter(app_label=new, model='layerconfig').exists():
        ContentType.objects.filter(app_label=old, model='layerconfig').update(app_label=new)


def forwards(apps, schema_editor):
    relabel(apps, schema_editor, old='layers', new='summaries')


def backwards(apps, schema_editor):
    relabel(apps, schema_editor, old='summaries', new='layers')


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('layers', '0012_layerconfig_to_summaries'),
        ('summaries', '0004_budget_reservations_and_jobs'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='LayerConfig',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('update_interval_seconds', models.PositiveIntegerField()),
                        ('update_on_changes', models.PositiveIntegerField()),
                        ('personalization', models.CharField(choices=[('generic', 'Generic'), ('personalized', 'Personalized'), ('highly_personalized', 'Highly personalized')], max_length=24)),
                        ('skip_if_unchanged', models.BooleanField(default=True)),
                        ('changes_since_summary', models.PositiveIntegerField(default=0)),
                        ('last_summarized_at', models.DateTimeField(blank=True, null=True)),
                        ('layer', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='config', to='layers.layer')),
                    ],
                    options={
                        'db_table': 'layers_layerconfig',
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]

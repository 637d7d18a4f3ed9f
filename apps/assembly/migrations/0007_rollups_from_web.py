# The assembly rollups and their watermarks move here from apps.web (web 0003 lets them go after this):
# state only, the tables keep their names (`web_*`), so no row is copied and no lock is taken. The
# content types follow the models.

import django.db.models.deletion
from django.db import migrations, models


MODELS = ('assemblyrollup', 'assemblyrollupcount', 'rollupwatermark')


def relabel(apps, *, old, new):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    for model in MODELS:
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    relabel(apps, old='web', new='assembly')


def backwards(apps, schema_editor):
    relabel(apps, old='assembly', new='web')


class Migration(migrations.Migration):

    dependencies = [
        ('assembly', '0006_record_zone_chunk_tokens'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('workspaces', '0006_invitation'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='RollupWatermark',
                    fields=[
                        ('name', models.CharField(max_length=32, primary_key=True, serialize=False)),
                        ('last_id', models.BigIntegerField(default=0)),
                        ('last_at', models.DateTimeField(blank=True, help_text='For time watermarks (consumption reports).', null=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'web_rollupwatermark',
                    },
                ),
                migrations.CreateModel(
                    name='AssemblyRollup',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('span', models.CharField(choices=[('m', 'Minute'), ('q', '15 minutes'), ('h', 'Hour'), ('s', '6 hours')], max_length=1)),
                        ('bucket', models.DateTimeField(help_text='Start of the minute or hour.')),
                        ('assemblies', models.PositiveIntegerField(default=0)),
                        ('assembly_cache_hits', models.PositiveIntegerField(default=0)),
                        ('embedding_lookups', models.PositiveIntegerField(default=0, help_text='Assemblies that needed a query embedding.')),
                        ('embedding_cache_hits', models.PositiveIntegerField(default=0)),
                        ('tokens_used', models.BigIntegerField(default=0)),
                        ('token_budget', models.BigIntegerField(default=0)),
                        ('overflowed', models.PositiveIntegerField(default=0, help_text='Assemblies that left candidates out.')),
                        ('truncated', models.PositiveIntegerField(default=0, help_text='Assemblies that cut a chunk.')),
                        ('elapsed_ms', models.FloatField(default=0.0)),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='workspaces.workspace')),
                    ],
                    options={
                        'db_table': 'web_assemblyrollup',
                        'constraints': [models.UniqueConstraint(fields=('workspace', 'span', 'bucket'), name='uniq_assembly_rollup')],
                    },
                ),
                migrations.CreateModel(
                    name='AssemblyRollupCount',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('span', models.CharField(choices=[('m', 'Minute'), ('q', '15 minutes'), ('h', 'Hour'), ('s', '6 hours')], max_length=1)),
                        ('bucket', models.DateTimeField()),
                        ('dimension', models.CharField(max_length=16)),
                        ('key', models.CharField(max_length=100)),
                        ('value', models.BigIntegerField(default=0)),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='workspaces.workspace')),
                    ],
                    options={
                        'db_table': 'web_assemblyrollupcount',
                        'constraints': [models.UniqueConstraint(fields=('workspace', 'span', 'bucket', 'dimension', 'key'), name='uniq_assembly_rollup_count')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]

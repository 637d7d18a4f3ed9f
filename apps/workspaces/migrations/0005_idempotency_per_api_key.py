"""Stored answers belong to the API key that sent the request, not to its workspace (issue 26 #4).

Rows of the old shape (plaintext answers, per workspace) are deleted: they expire within a day anyway,
and a retry of one of them writes again once at most.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("workspaces", "0004_membership_developer_role"),
    ]

    operations = [
        migrations.RunSQL("DELETE FROM workspaces_idempotencykey", migrations.RunSQL.noop),
        migrations.RemoveConstraint(model_name="idempotencykey", name="uniq_idempotency_key"),
        migrations.RemoveField(model_name="idempotencykey", name="workspace"),
        migrations.AddField(
            model_name="idempotencykey",
            name="api_key",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="idempotency_keys",
                to="workspaces.apikey",
            ),
            preserve_default=False,
        ),
        migrations.AddConstraint(
            model_name="idempotencykey",
            constraint=models.UniqueConstraint(fields=("api_key", "key"), name="uniq_idempotency_api_key"),
        ),
    ]

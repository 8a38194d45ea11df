# Copyright (c) 2026, snowflake contributors
"""The table as Django created it before the move: a BigAutoField key."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [
        migrations.CreateModel(
            name="Ticket",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("note", models.TextField(unique=True)),
            ],
        ),
    ]

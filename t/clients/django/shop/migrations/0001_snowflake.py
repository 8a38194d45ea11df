# Copyright (c) 2026, snowflake contributors
"""The extension first, before any table that calls snowflake_nextval().
CreateExtension is reversible: migrating back drops the extension.  It does
nothing when the extension is there already (for example, copied from
template1 into a new test database), so an application role that may not
create extensions can still run it there."""

from django.contrib.postgres.operations import CreateExtension
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = []
    operations = [CreateExtension("snowflake")]

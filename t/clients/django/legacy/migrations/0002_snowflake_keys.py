# Copyright (c) 2026, snowflake contributors
"""Move the key to snowflake IDs, reversibly.

snowflake_migrate() changes the table and returns the statements that undo
it, kept in a table until the migration is reversed.  The model state
learns the new field without an ALTER of its own: an AlterField to
SnowflakeAutoField would emit ALTER COLUMN ... TYPE bigint DEFAULT ...,
which is not valid SQL.  Needs the extension, which shop's 0001 creates."""

from django.db import migrations

import shop.fields

FORWARD = """
    CREATE TABLE legacy_ticket_snowflake_undo AS
        SELECT step, statement FROM snowflake_migrate('legacy_ticket') WHERE kind = 'undo'
"""

BACKWARD = """
    DO $$
    DECLARE
        undo text;
    BEGIN
        FOR undo IN SELECT statement FROM legacy_ticket_snowflake_undo ORDER BY step LOOP
            EXECUTE undo;
        END LOOP;
        DROP TABLE legacy_ticket_snowflake_undo;
    END
    $$
"""


class Migration(migrations.Migration):
    dependencies = [("legacy", "0001_initial"), ("shop", "0001_snowflake")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, reverse_sql=BACKWARD)],
            state_operations=[
                migrations.AlterField(
                    "ticket", "id",
                    shop.fields.SnowflakeAutoField(primary_key=True, serialize=False)),
            ],
        ),
    ]

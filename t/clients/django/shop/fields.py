# Copyright (c) 2026, snowflake contributors
"""The primary key field for Django before 5.0, as docs/clients.md gives it.

A BigAutoField, so that Django leaves the key out of the INSERT and reads
it back with RETURNING, whose column type carries the default.  Django
4.1 and later make auto fields identity columns through db_type_suffix;
returning None keeps the plain default."""

from django.db import models


class SnowflakeAutoField(models.BigAutoField):
    def db_type(self, connection):
        return "bigint DEFAULT snowflake_nextval()"

    def db_type_suffix(self, connection):
        return None

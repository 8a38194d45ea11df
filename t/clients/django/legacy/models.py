# Copyright (c) 2026, snowflake contributors
"""An app whose table was created with Django's own BigAutoField (bigserial
before Django 4.1, an identity column since), then moved to snowflake keys
by migration 0002, as docs/migration.md describes."""

from django.db import models

from shop.fields import SnowflakeAutoField


class Ticket(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    note = models.TextField(unique=True)

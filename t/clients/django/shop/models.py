# Copyright (c) 2026, snowflake contributors
"""Models keyed by snowflake IDs, declared as docs/clients.md says.

Customer and Order use the declaration for the Django that runs them: a
database default (db_default) from 5.0 on, the SnowflakeAutoField of
fields.py before.  Item uses SnowflakeAutoField on every version: the
guide recommends it on 5.x too where bulk_create() must return the keys."""

import django
from django.db import models

from .fields import SnowflakeAutoField


def snowflake_id():
    if django.VERSION >= (5, 0):
        return models.BigIntegerField(
            primary_key=True,
            db_default=models.Func(function="snowflake_nextval",
                                   output_field=models.BigIntegerField()))
    return SnowflakeAutoField(primary_key=True)


class Customer(models.Model):
    id = snowflake_id()
    name = models.TextField(unique=True)


class Order(models.Model):
    id = snowflake_id()
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
    note = models.TextField(unique=True)


class Item(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    order = models.ForeignKey(Order, on_delete=models.CASCADE)
    note = models.TextField(unique=True)

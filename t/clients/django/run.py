#!/usr/bin/python3
# Copyright (c) 2026, snowflake contributors
"""Insert through the Django ORM into the shop app's tables, keyed by
snowflake_nextval(), and print the IDs Django read back.

Usage: python3 run.py, in the project directory, with the PG* environment
variables set.  Prints "django MAJOR.MINOR", then one line per object,
"TABLE NOTE ID": customers and tickets are inserted one by one with
Model.save(), orders and items with QuerySet.bulk_create().  ID is "UNSET" where Django
did not read the key back (bulk_create() with db_default keys on Django
5.0 to 5.2).  Then "lookup NOTE FOUND" for each object with a key, looked
up again by it ("NONE" if not found).  t/211_client_django.pl checks it all
in SQL.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

import django  # noqa: E402

django.setup()

from legacy.models import Ticket  # noqa: E402
from shop.models import Customer, Item, Order  # noqa: E402


def key(obj):
    return obj.pk if isinstance(obj.pk, int) else "UNSET"


def main():
    print("django %d.%d" % django.VERSION[:2])

    customers = []
    for i in range(20):
        customer = Customer(name="customer-%d" % i)
        customer.save()
        customers.append(customer)
    orders = Order.objects.bulk_create(
        [Order(customer=c, note="order-%d" % i) for i, c in enumerate(customers)])
    # The orders' keys, from the database where bulk_create() left them
    # unset, for the items' foreign keys.
    order_ids = dict(Order.objects.values_list("note", "id"))
    items = Item.objects.bulk_create(
        [Item(order_id=order_ids[o.note], note="item-%d" % i) for i, o in enumerate(orders)])

    tickets = []
    for i in range(5):
        ticket = Ticket(note="ticket-%d" % i)
        ticket.save()
        tickets.append(ticket)

    for table, objs in (("customer", customers), ("order", orders), ("item", items),
                        ("ticket", tickets)):
        for obj in objs:
            note = getattr(obj, "name", None) or obj.note
            print("%s %s %s" % (table, note, key(obj)))

    for obj in customers + orders + items + tickets:
        if key(obj) == "UNSET":
            continue
        note = getattr(obj, "name", None) or obj.note
        found = type(obj).objects.filter(pk=obj.pk).first()
        print("lookup %s %s" % (note, (getattr(found, "name", None) or found.note) if found else "NONE"))


if __name__ == "__main__":
    main()

# Copyright (c) 2026, snowflake contributors
"""Run by Django's test runner in the test database it creates: the keys
must come from snowflake_nextval() there too."""

from django.db import connection
from django.test import TestCase

from .models import Customer, Item, Order


class SnowflakeKeyTests(TestCase):
    def test_keys_come_from_the_server(self):
        customer = Customer.objects.create(name="test customer")
        order = Order.objects.create(customer=customer, note="test order")
        item = Item.objects.create(order=order, note="test item")

        self.assertTrue(connection.settings_dict["NAME"].startswith("test_"))
        self.assertIsInstance(order.pk, int)
        self.assertGreater(customer.pk, 2**53)
        self.assertGreater(order.pk, customer.pk)
        self.assertGreater(item.pk, order.pk)
        self.assertEqual(Item.objects.get(pk=item.pk).order.customer_id, customer.pk)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT worker_id = current_setting('snowflake.worker_id')::int"
                "  FROM snowflake_parse(%s)", [item.pk])
            self.assertTrue(cursor.fetchone()[0])

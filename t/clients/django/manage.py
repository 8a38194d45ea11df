#!/usr/bin/python3
# Copyright (c) 2026, snowflake contributors
"""The project's manage.py, as django-admin startproject writes one."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)

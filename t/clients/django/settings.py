# Copyright (c) 2026, snowflake contributors
"""Settings of the Django project t/211_client_django.pl builds: the apps
shop and legacy, and the database from the PG* environment variables."""

import os

SECRET_KEY = "snowflake-client-test"
INSTALLED_APPS = ["shop", "legacy"]
USE_TZ = True
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": os.environ["PGHOST"],
        "PORT": os.environ["PGPORT"],
        "NAME": os.environ["PGDATABASE"],
        "USER": os.environ["PGUSER"],
    }
}

"""The PostgreSQL store: many workers, one history (needs the ``postgres`` extra)."""

from ctxrules.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION, Migration
from ctxrules.store.postgres.store import PostgresStore

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "PostgresStore"]

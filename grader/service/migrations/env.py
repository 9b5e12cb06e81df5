"""Alembic's environment for the service's database: run from store.upgrade() with the
connection it opened (never from a command line), against schema.metadata."""

from alembic import context

from grader.service.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()

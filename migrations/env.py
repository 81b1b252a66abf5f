"""Alembic environment: pbmserv passes its engine in `config.attributes["engine"]`."""

from alembic import context

from pbmserv.store.models import Base

engine = context.config.attributes["engine"]

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,
        compare_type=True,
        transactional_ddl=True,  # all of an upgrade, or none of it (SQLite can)
    )
    with context.begin_transaction():
        context.run_migrations()

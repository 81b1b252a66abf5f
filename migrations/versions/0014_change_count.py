"""change_count: one row, and on SQLite triggers that count every row written to the
tables a board's objects come from (a worker keeps its boards while it is unchanged)

Every table but the queues and the rate events is counted. SQLite drops a table's
triggers when a batch migration copies the table: a later migration that does so must
call `count_changes` for it again (tests/test_kept.py checks that each has them).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 23:00:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None

COUNTED = ('settings', 'users', 'addresses', 'games', 'seats', 'moves', 'vacations', 'subscriptions',
           'pending_moves', 'preferences', 'seeks', 'ratings')
OPERATIONS = ('insert', 'update', 'delete')


def count_changes(table: str) -> None:
    """The triggers that count `table`'s written rows (SQLite only)."""
    for operation in OPERATIONS:
        op.execute(f"CREATE TRIGGER count_{table}_{operation} AFTER {operation.upper()} ON {table} "
                   f"BEGIN UPDATE change_count SET count = count + 1 WHERE id = 1; END")


def upgrade() -> None:
    op.create_table('change_count',
                    sa.Column('id', sa.Integer(), nullable=False),
                    sa.Column('count', sa.Integer(), nullable=False),
                    sa.PrimaryKeyConstraint('id', name=op.f('pk_change_count')))
    op.execute("INSERT INTO change_count (id, count) VALUES (1, 0)")
    if op.get_bind().dialect.name == 'sqlite':
        for table in COUNTED:
            count_changes(table)


def downgrade() -> None:
    if op.get_bind().dialect.name == 'sqlite':
        for table in COUNTED:
            for operation in OPERATIONS:
                op.execute(f"DROP TRIGGER count_{table}_{operation}")
    op.drop_table('change_count')

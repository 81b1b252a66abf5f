"""games: how many pending moves and observers a board has, so that a board with
none is loaded without asking for them

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 20:30:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pending_count', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('observer_count', sa.Integer(), server_default='0', nullable=False))
    games = sa.table('games', sa.column('id', sa.Integer), sa.column('pending_count', sa.Integer),
                     sa.column('observer_count', sa.Integer))
    for column, table in (('pending_count', 'pending_moves'), ('observer_count', 'subscriptions')):
        rows = sa.table(table, sa.column('game_id', sa.Integer))
        count = sa.select(sa.func.count()).select_from(rows).where(rows.c.game_id == games.c.id).scalar_subquery()
        op.execute(games.update().values({column: count}))


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('observer_count')
        batch_op.drop_column('pending_count')

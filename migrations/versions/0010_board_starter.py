"""games: who started a board (a rematch's seats are rotated)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 04:40:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('starter_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('starter_id')

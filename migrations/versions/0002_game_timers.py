"""game timers

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 12:52:35.093916
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('timers', sa.JSON(), nullable=False, server_default='{}'))
        batch_op.add_column(sa.Column('due_at', sa.DateTime(), nullable=True))
        batch_op.create_index(batch_op.f('ix_games_due_at'), ['due_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_games_due_at'))
        batch_op.drop_column('due_at')
        batch_op.drop_column('timers')

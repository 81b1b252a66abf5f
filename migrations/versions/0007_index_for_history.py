"""an index for the history of finished boards

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29 15:16:12.573466
"""
from alembic import op


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.create_index('ix_games_type_status_updated', ['game_type', 'status', 'updated_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index('ix_games_type_status_updated')

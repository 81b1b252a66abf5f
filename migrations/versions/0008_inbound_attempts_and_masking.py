"""inbound mail: processing attempts (quarantine) and whether its secrets were masked

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 20:50:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempts', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('masked', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('inbound', schema=None) as batch_op:
        batch_op.drop_column('masked')
        batch_op.drop_column('attempts')

"""address confirmation and bounces

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 13:11:05.354019
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('confirmed', sa.Boolean(), nullable=False, server_default=sa.true()))
        batch_op.add_column(sa.Column('token_hash', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('failures', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.drop_column('failures')
        batch_op.drop_column('token_hash')
        batch_op.drop_column('confirmed')

"""outbound: a reply's draft, what the sender renders it from (its raw stays empty
until then)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 17:20:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbound', schema=None) as batch_op:
        batch_op.add_column(sa.Column('draft', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('outbound', schema=None) as batch_op:
        batch_op.drop_column('draft')

"""users: mail preferences (html, mail every|turn|digest, the digest's time) and listed

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 03:10:00
"""
import sqlalchemy as sa
from alembic import op


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('html', sa.Boolean(), nullable=False, server_default=sa.true()))
        batch_op.add_column(sa.Column('mail', sa.String(length=8), nullable=False, server_default='every'))
        batch_op.add_column(sa.Column('digest_at', sa.String(length=5), nullable=False, server_default='07:00'))
        batch_op.add_column(sa.Column('digest_due', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('digest_since', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('listed', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.create_index('ix_users_digest_due', ['digest_due'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index('ix_users_digest_due')
        for column in ('listed', 'digest_since', 'digest_due', 'digest_at', 'mail', 'html'):
            batch_op.drop_column(column)

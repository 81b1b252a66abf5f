"""nag and forfeit clocks, vacations, observers

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 14:11:34.695784
"""
from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('subscriptions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], name=op.f('fk_subscriptions_game_id_games')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_subscriptions_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_subscriptions')),
    sa.UniqueConstraint('game_id', 'user_id', name='uq_subscriptions_game_user')
    )
    with op.batch_alter_table('subscriptions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_subscriptions_game_id'), ['game_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_subscriptions_user_id'), ['user_id'], unique=False)

    op.create_table('vacations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('start', sa.DateTime(), nullable=False),
    sa.Column('end', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_vacations_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_vacations'))
    )
    with op.batch_alter_table('vacations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_vacations_user_id'), ['user_id'], unique=False)

    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('nag_after', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('forfeit_after', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('clocks', sa.JSON(), nullable=False, server_default='{}'))


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('clocks')
        batch_op.drop_column('forfeit_after')
        batch_op.drop_column('nag_after')

    with op.batch_alter_table('vacations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_vacations_user_id'))

    op.drop_table('vacations')
    with op.batch_alter_table('subscriptions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_subscriptions_user_id'))
        batch_op.drop_index(batch_op.f('ix_subscriptions_game_id'))

    op.drop_table('subscriptions')

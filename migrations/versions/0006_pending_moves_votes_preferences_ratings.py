"""queued and submitted moves, votes, challenge preferences, ratings

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29 14:32:52.016168
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('pending_moves',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=False),
    sa.Column('seat', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('move', sa.Text(), nullable=False),
    sa.Column('comment', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], name=op.f('fk_pending_moves_game_id_games')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pending_moves')),
    sa.UniqueConstraint('game_id', 'seat', 'kind', name='uq_pending_moves_game_seat_kind')
    )
    with op.batch_alter_table('pending_moves', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pending_moves_game_id'), ['game_id'], unique=False)

    op.create_table('preferences',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('game_type', sa.String(length=32), nullable=False),
    sa.Column('refuse', sa.Boolean(), nullable=False),
    sa.Column('limit', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_preferences_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_preferences')),
    sa.UniqueConstraint('user_id', 'game_type', name='uq_preferences_user_game')
    )
    with op.batch_alter_table('preferences', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_preferences_user_id'), ['user_id'], unique=False)

    op.create_table('ratings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('game_type', sa.String(length=32), nullable=False),
    sa.Column('rating', sa.Float(), nullable=False),
    sa.Column('games', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_ratings_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ratings')),
    sa.UniqueConstraint('user_id', 'game_type', name='uq_ratings_user_game')
    )
    with op.batch_alter_table('ratings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ratings_user_id'), ['user_id'], unique=False)

    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('vote', sa.JSON(), nullable=True))

    with op.batch_alter_table('moves', schema=None) as batch_op:
        batch_op.add_column(sa.Column('auto', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('moves', schema=None) as batch_op:
        batch_op.drop_column('auto')

    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('vote')

    with op.batch_alter_table('ratings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ratings_user_id'))

    op.drop_table('ratings')
    with op.batch_alter_table('preferences', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_preferences_user_id'))

    op.drop_table('preferences')
    with op.batch_alter_table('pending_moves', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pending_moves_game_id'))

    op.drop_table('pending_moves')

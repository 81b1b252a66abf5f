"""seeks (open challenges), robot players and the boards that wait for them

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 06:40:00
"""
from datetime import datetime

import sqlalchemy as sa
from alembic import op


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None

ROBOTS = {"robot1": 1, "robot2": 2, "robot3": 3}  # as pbmserv/robots/__init__.py names them


def upgrade() -> None:
    op.create_table(
        'seeks',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('game_type', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('players', sa.Integer(), nullable=False),
        sa.Column('params', sa.JSON(), nullable=False),
        sa.Column('nag_after', sa.Integer(), nullable=False),
        sa.Column('forfeit_after', sa.Integer(), nullable=False),
        sa.Column('joined', sa.JSON(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('board', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_seeks_user_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_seeks')),
    )
    with op.batch_alter_table('seeks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_seeks_user_id'), ['user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_seeks_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_seeks_expires_at'), ['expires_at'], unique=False)
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('robot', sa.Integer(), nullable=True))
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('robot_turn', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.create_index(batch_op.f('ix_games_robot_turn'), ['robot_turn'], unique=False)
    users = sa.table('users', sa.column('id', sa.Integer), sa.column('userid', sa.String),
                     sa.column('userid_key', sa.String), sa.column('password_hash', sa.String),
                     sa.column('created_at', sa.DateTime), sa.column('disabled', sa.Boolean),
                     sa.column('robot', sa.Integer), sa.column('listed', sa.Boolean))
    taken = {row[0] for row in op.get_bind().execute(sa.select(users.c.userid_key))}
    for userid, level in ROBOTS.items():
        if userid in taken:  # a person registered the name before it was reserved: they keep it
            continue
        op.bulk_insert(users, [{"userid": userid, "userid_key": userid, "password_hash": "!",
                                "created_at": datetime(2026, 12, 1), "disabled": False, "robot": level,
                                "listed": True}])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM users WHERE robot IS NOT NULL"))
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_games_robot_turn'))
        batch_op.drop_column('robot_turn')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('robot')
    op.drop_table('seeks')

"""The ladder's schema migrations (Alembic): ``referee.ladder.db.upgrade`` runs them."""

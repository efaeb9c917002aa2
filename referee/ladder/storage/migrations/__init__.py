"""The ladder's schema migrations (Alembic): ``referee.ladder.storage.db.upgrade`` runs them."""

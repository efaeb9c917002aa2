"""One file per revision, oldest first; a revision is never edited once released."""

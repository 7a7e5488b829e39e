"""Checking the database file and recovering it: integrity checks, index rebuilds, backups."""

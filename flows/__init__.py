"""Prefect flows: they only compose tasks from `tasks/`."""

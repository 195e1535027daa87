"""Thin Prefect task wrappers: each calls one function of `pretrain_core` and reports to the UI."""

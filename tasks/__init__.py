"""Thin Prefect task wrappers: each calls one function of `pretrain_core` and reports to the UI."""

from tasks.library_logs import forward_library_logs

# Every process that runs a task imports this package first (the flow's, and each worker process or Dask worker
# that unpickles a task), so the library's log records reach the UI from all of them.
forward_library_logs()

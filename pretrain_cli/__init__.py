"""The `pretrain` command line (the application shell over `pretrain_core`, `tasks` and `flows`)."""

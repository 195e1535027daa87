"""Starting and supervising runs: torchrun, the supervisor, the module's command line and its flags."""

"""pretrain: the library behind the pipeline. Pure Python; never imports Prefect."""

__version__ = "0.1.0"

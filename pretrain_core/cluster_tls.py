"""How the pipeline reaches a Dask cluster safely.

A Dask scheduler runs whatever a connected client sends it, on every worker, with the workers' storage
credentials: a scheduler anyone can reach is remote code execution. So the cluster speaks mutual TLS: one
private CA signs one certificate that the scheduler, the workers and the pipeline's client all present, and each
side refuses a peer without a certificate from that CA (`pretrain_core/cluster_certs.py` makes them;
`infra/dask/start-cluster.sh` and `execution.dask_tls` read them).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import Field

from pretrain_core.config_base import StrictModel

CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE = "ca.pem", "ca-key.pem", "cert.pem", "key.pem"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class DaskTlsConfig(StrictModel):
    """The files of `pretrain dask-certs`: what the pipeline's Dask client presents to the scheduler."""

    ca_file: str = Field(description="PEM file of the CA that signed the cluster's certificates (ca.pem).")
    cert_file: str = Field(description="PEM certificate the client presents (cert.pem).")
    key_file: str = Field(description="PEM private key of that certificate (key.pem).")

    @classmethod
    def in_directory(cls, directory: str | Path) -> DaskTlsConfig:
        folder = Path(directory)
        return cls(ca_file=str(folder / CA_FILE), cert_file=str(folder / CERT_FILE), key_file=str(folder / KEY_FILE))


def is_local(address: str) -> bool:
    """Whether a Dask address stays on this machine: in-process (`inproc://`) or on loopback (`tcp://127.0.0.1:…`)."""
    if address.startswith("inproc://"):
        return True
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

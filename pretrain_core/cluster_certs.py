"""The certificates of a Dask cluster's mutual TLS (`pretrain dask-certs`): a private CA and one certificate it
signs, which the scheduler, the workers and the pipeline's client all present (see `cluster_tls`)."""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pretrain_core.cluster_tls import CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE, LOOPBACK_HOSTS, DaskTlsConfig

_CA_KEY_USAGE = x509.KeyUsage(
    digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
    key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False,
)  # fmt: skip


def make_certificates(directory: Path, hosts: list[str], days: int = 365) -> DaskTlsConfig:
    """Write a new CA and a certificate it signs for `hosts` (and loopback) into `directory`; the private keys are
    readable by their owner only. Refuses to overwrite: a new CA locks out every machine holding the old files."""
    directory.mkdir(parents=True, exist_ok=True)
    existing = [name for name in (CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE) if (directory / name).exists()]
    if existing:
        raise FileExistsError(f"{directory} already holds {', '.join(existing)}: remove them or choose another folder")
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pretrain dask CA")])
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key(), now, days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_CA_KEY_USAGE, critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [*dict.fromkeys([*hosts, *LOOPBACK_HOSTS])]
    cert = (
        _builder(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pretrain dask")]), ca_name, key.public_key(), now, days
        )
        .add_extension(x509.SubjectAlternativeName([_general_name(name) for name in names]), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write(directory / CA_FILE, ca_cert.public_bytes(serialization.Encoding.PEM), private=False)
    _write(directory / CERT_FILE, cert.public_bytes(serialization.Encoding.PEM), private=False)
    _write(directory / CA_KEY_FILE, _key_bytes(ca_key), private=True)
    _write(directory / KEY_FILE, _key_bytes(key), private=True)
    return DaskTlsConfig.in_directory(directory)


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey, now: datetime.datetime, days: int
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
    )


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _key_bytes(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write(path: Path, data: bytes, private: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)

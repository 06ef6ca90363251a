"""The companion page's settings, secret and certificate: the person's, kept outside the project folder.

A project folder may be a hostile clone: nothing in it may turn the companion on (it opens a port) or
name a device it could use. So whether it is on, where it listens, the key that hashes tokens and
codes, and the TLS certificate live under the person's config folder, one folder per project root.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ralph_desk.project.errors import ProjectError
from ralph_desk.project.paths import ProjectPaths

log = logging.getLogger("ralph_desk.companion")

DEFAULT_PORT = 47800
FOLDER_MODE = 0o700
FILE_MODE = 0o600
CERTIFICATE_DAYS = 825
SECRET_BYTES = 32
LOOPBACK = "127.0.0.1"
ALL_INTERFACES = ("0.0.0.0", "::")
"""The addresses that bind every interface at once: any network this computer is on reaches the page."""


@dataclass(frozen=True)
class CompanionSettings:
    """Whether the companion serves this project, and on which one address and port."""

    enabled: bool = False
    host: str = LOOPBACK
    port: int = DEFAULT_PORT

    def problem(self) -> str:
        """What is wrong with these settings, or "" when they can be served."""
        try:
            address = ipaddress.ip_address(self.host)
        except ValueError:
            return f"host {self.host!r} is not an IP address; allowed: one of this computer's addresses"
        if address.is_multicast:
            return f"host {self.host} is a multicast address; allowed: one of this computer's addresses"
        if not 0 <= self.port <= 65535:
            return f"port {self.port} is out of range; allowed: 1 to 65535 (0: any free port)"
        return ""

    @property
    def all_interfaces(self) -> bool:
        """Whether the address is every interface at once (0.0.0.0 or ::): anyone on any network."""
        return self.host in ALL_INTERFACES


@dataclass(frozen=True)
class Certificate:
    """The page's TLS certificate and key files, and the fingerprint a phone can compare."""

    cert_file: Path
    key_file: Path
    fingerprint: str
    host: str


def project_key(root: Path) -> str:
    """A short stable name for a project folder (its resolved path hashed)."""
    return hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:20]


def _write_private(path: Path, data: bytes) -> None:
    """Write `path` readable by its owner only, whole or not at all."""
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(
        partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


class CompanionHome:
    """One project's companion folder under the person's config folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def of(cls, paths: ProjectPaths) -> CompanionHome:
        """The companion folder of this project (not created until something is saved)."""
        import platformdirs

        return cls(Path(platformdirs.user_config_dir("ralph-desk")) / "companion" / project_key(paths.root))

    @property
    def settings_file(self) -> Path:
        return self.folder / "settings.json"

    def _ensure(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
        os.chmod(self.folder, FOLDER_MODE)

    def settings(self) -> CompanionSettings:
        """The saved settings; none saved (or an unreadable file, logged) means off."""
        settings, problem = self.read_settings()
        if problem:
            log.warning("%s", problem)
        return settings

    def read_settings(self) -> tuple[CompanionSettings, str]:
        """The saved settings and why they could not be read ("" when they could; off when not)."""
        try:
            data = json.loads(self.settings_file.read_text(encoding="utf-8"))
            settings = CompanionSettings(
                enabled=data["enabled"] is True, host=str(data["host"]), port=int(data["port"])
            )
        except FileNotFoundError:
            return CompanionSettings(), ""
        except (OSError, ValueError, KeyError, TypeError) as error:
            return (
                CompanionSettings(),
                f"{self.settings_file} cannot be read ({error}): the companion stays off",
            )
        return settings, ""

    def save(self, settings: CompanionSettings) -> None:
        """Keep these settings for the next start (refused when they could not be served)."""
        problem = settings.problem()
        if problem:
            raise ProjectError(f"companion: {problem}")
        self._ensure()
        _write_private(self.settings_file, json.dumps(asdict(settings), indent=2).encode("utf-8"))

    def secret(self) -> bytes:
        """The key that hashes this project's device tokens and pairing codes (made on first use)."""
        path = self.folder / "secret"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        if len(data) == SECRET_BYTES:
            return data
        self._ensure()
        data = secrets.token_bytes(SECRET_BYTES)
        _write_private(path, data)
        return data

    def certificate(self, host: str, names: Sequence[str] = ()) -> Certificate:
        """The page's certificate for `host` (and `names`, the addresses it also answers on), made on
        first use and made again for other names."""
        cert_file, key_file = self.folder / "cert.pem", self.folder / "key.pem"
        marker = self.folder / "cert-host"
        named = "\n".join([host, *sorted(names)])
        try:
            same_host = marker.read_text(encoding="utf-8") == named and key_file.exists()
            pem = cert_file.read_bytes() if same_host else b""
        except OSError:
            pem = b""
        if not pem or _expires_soon(pem):
            self._ensure()
            pem, key = _self_signed([host, *names])
            _write_private(key_file, key)
            _write_private(cert_file, pem)
            _write_private(marker, named.encode("utf-8"))
        return Certificate(cert_file, key_file, fingerprint_of(pem), host)


def fingerprint_of(pem: bytes) -> str:
    """The SHA-256 fingerprint of a PEM certificate as browsers show it (AB:CD:…)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    digest = x509.load_pem_x509_certificate(pem).fingerprint(hashes.SHA256())
    return ":".join(f"{byte:02X}" for byte in digest)


def _expires_soon(pem: bytes) -> bool:
    from cryptography import x509

    try:
        certificate = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return True
    return certificate.not_valid_after_utc < datetime.now(UTC) + timedelta(days=30)


def _subject_names(hosts: Sequence[str]) -> list[Any]:
    """The certificate's names: each address as an IP, each host name as a name; loopback adds localhost."""
    from cryptography import x509

    names: list[Any] = []
    for host in dict.fromkeys(hosts):
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            names.append(x509.DNSName(host))
            continue
        if address.is_unspecified:
            continue
        names.append(x509.IPAddress(address))
        if address.is_loopback and x509.DNSName("localhost") not in names:
            names.append(x509.DNSName("localhost"))
    return names


def _self_signed(hosts: Sequence[str]) -> tuple[bytes, bytes]:
    """A new key and a certificate for `hosts` signed by it (PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ralph-desk companion")])
    names = _subject_names(hosts)
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=CERTIFICATE_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem

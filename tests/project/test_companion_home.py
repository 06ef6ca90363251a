"""The companion's settings, secret and certificate live outside the project, readable by the person only."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from cryptography import x509

from ralph_desk.project.companion_home import CompanionHome, CompanionSettings, fingerprint_of
from ralph_desk.project.errors import ProjectError


def test_settings_default_to_off_and_survive_a_broken_file(tmp_path: Path) -> None:
    home = CompanionHome(tmp_path / "c")
    assert home.settings() == CompanionSettings(enabled=False)
    home.save(CompanionSettings(enabled=True, host="127.0.0.1", port=0))
    assert home.settings().enabled
    home.settings_file.write_text("{not json")
    assert home.settings().enabled is False  # unreadable: off, never on
    with pytest.raises(ProjectError, match="not an IP address"):
        home.save(CompanionSettings(enabled=True, host="evil.example"))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_the_secret_and_key_are_private_and_stable(tmp_path: Path) -> None:
    home = CompanionHome(tmp_path / "c")
    assert home.secret() == home.secret()
    certificate = home.certificate("127.0.0.1")
    for path in (home.folder / "secret", certificate.key_file, certificate.cert_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.folder.stat().st_mode) == 0o700
    assert home.certificate("127.0.0.1").fingerprint == certificate.fingerprint
    pem = certificate.cert_file.read_bytes()
    extensions = x509.load_pem_x509_certificate(pem).extensions
    names = extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert "127.0.0.1" in [str(ip) for ip in names.value.get_values_for_type(x509.IPAddress)]
    assert fingerprint_of(pem) == certificate.fingerprint and len(certificate.fingerprint) == 95
    assert home.certificate("10.1.2.3").fingerprint != certificate.fingerprint  # another host, another cert

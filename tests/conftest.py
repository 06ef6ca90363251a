"""Shared fixtures: a fresh migrated database per test and a service of each kind over it.

A new SQLite database starts as a copy of one migrated once per run (`tests/support/sqlite_template.py`),
unless the test is marked `migrates_afresh`.

The suites run on SQLite by default. With `--backend postgres` (or `RALPH_TEST_DB=postgres`) and
`RALPH_DESK_TEST_POSTGRES_URL` naming a server (`.ci/postgres` starts one), every test gets a fresh
PostgreSQL database of its own instead — created from a migrated template, dropped afterwards — and
everything that finds its database the usual way uses it: the `db` fixture, `ProjectPaths.db_url()`
(so `init_project` and `Services.open`) and, through `RALPH_DB_URL`, the processes a test starts.
A module whose tests share a project made by a module-scoped fixture shares one database instead.
Tests that are about the SQLite file itself (they use `db_path`, are named `test_sqlite_…` or are
marked `sqlite_only`) are skipped there, and so are those in `NOT_ON_POSTGRES`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.project import DB_URL_ENV, ProjectPaths
from ralph_desk.project.trust import TRUST_FILE_ENV
from ralph_desk.services.comments import CommentService
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.features import FeatureService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database
from ralph_desk.store.urls import sqlite_url
from tests.postgres import server
from tests.support import sqlite_template

BACKENDS = ("sqlite", "postgres")

NOT_ON_POSTGRES = {
    "tests/mcp_server/test_external_clients.py::test_inspector_lists_calls_and_reads_over_stdio": (
        "the Inspector starts `ralph-desk mcp` with a filtered environment (no RALPH_DB_URL) and the "
        "test passes no --db-url, so that server opens the project's SQLite file"
    ),
}
"""Tests that cannot reach the test's PostgreSQL database, and why."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=BACKENDS,
        default=None,
        help=f"the database the suites run on (default: ${server.BACKEND_ENV}, else sqlite); "
        f"postgres needs ${server.ADMIN_URL_ENV}",
    )


def backend(config: pytest.Config) -> str:
    """The database backend this run tests."""
    chosen = config.getoption("--backend") or os.environ.get(server.BACKEND_ENV) or "sqlite"
    if chosen not in BACKENDS:
        raise pytest.UsageError(f"{server.BACKEND_ENV}={chosen!r}; allowed: {', '.join(BACKENDS)}")
    return str(chosen)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: about the SQLite file itself; skipped on PostgreSQL")
    config.addinivalue_line(
        "markers", "migrates_afresh: new SQLite files are migrated, not copied from the run's template"
    )
    if backend(config) == "postgres" and server.admin_url() is None:
        raise pytest.UsageError(
            f"the postgres backend needs {server.ADMIN_URL_ENV} (a URL of a server where the tests may "
            "create databases); `.ci/postgres` starts one and prints it"
        )


def pytest_report_header(config: pytest.Config) -> str:
    return f"database backend: {backend(config)}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if backend(config) != "postgres":
        return
    skip = pytest.mark.skip(reason="about the SQLite file itself; this run is on PostgreSQL")
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if item.nodeid in NOT_ON_POSTGRES:
            item.add_marker(pytest.mark.skip(reason=NOT_ON_POSTGRES[item.nodeid]))
        elif (
            item.get_closest_marker("sqlite_only")
            or item.name.startswith("test_sqlite")
            or "db_path" in fixtures
        ):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def _postgres_template(pytestconfig: pytest.Config) -> Iterator[str | None]:
    """A database migrated to head that each test's database is copied from (postgres backend only)."""
    if backend(pytestconfig) != "postgres":
        yield None
        return
    url = server.create_database()
    try:
        Database(url).dispose()
        name = url.rsplit("/", 1)[1]
        yield name
    finally:
        server.drop_database(url)


def _uses_shared_test_fixtures(item: pytest.Item) -> bool:
    """Whether a test uses a fixture of a test module or suite that outlives it (module-scoped...)."""
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    return any(
        fixture.scope != "function"
        and fixture.func.__module__.startswith("tests.")
        and fixture.func.__module__ != __name__
        for fixtures in definitions
        for fixture in fixtures
    )


def _point_projects_at(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `url` the database of every project opened the usual way, here and in child processes."""

    def db_url(self: ProjectPaths, override: str | None = None) -> str:
        return override or os.environ.get(DB_URL_ENV) or url

    # Some suites drop RALPH_DB_URL to keep a developer's setting out; their projects still land here.
    monkeypatch.setattr(ProjectPaths, "db_url", db_url)
    monkeypatch.setenv(DB_URL_ENV, url)


@pytest.fixture(scope="session", autouse=True)
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One SQLite database migrated to head; every new SQLite file a test opens starts as its copy."""
    template = tmp_path_factory.mktemp("template") / "ralph.db"
    Database(sqlite_url(template)).dispose()
    with pytest.MonkeyPatch.context() as monkeypatch:
        copying = sqlite_template.opening_copies_of(template, Database.__init__)
        monkeypatch.setattr(Database, "__init__", copying)
        yield template


@pytest.fixture(autouse=True)
def _migrates_afresh(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked `migrates_afresh` sees new SQLite files migrated one by one, as users' are."""
    if request.node.get_closest_marker("migrates_afresh"):
        monkeypatch.setattr(sqlite_template, "enabled", False)


@pytest.fixture(scope="session", autouse=True)
def _own_user_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The run's own config, data and state folders (each xdist worker's): never the tester's, nor shared."""
    home = tmp_path_factory.mktemp("user")
    folders = {name: home / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name, folder in folders.items():
            folder.mkdir()
            monkeypatch.setenv(name, str(folder))
        yield


@pytest.fixture(scope="session", autouse=True)
def _trust_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The trusted agent commands of this test run, never the tester's own (every process inherits it)."""
    path = tmp_path_factory.mktemp("trust") / "trusted-commands.json"
    before = os.environ.get(TRUST_FILE_ENV)
    os.environ[TRUST_FILE_ENV] = str(path)
    yield path
    if before is None:
        os.environ.pop(TRUST_FILE_ENV, None)
    else:
        os.environ[TRUST_FILE_ENV] = before


@pytest.fixture(scope="module", autouse=True)
def _module_backend_url(
    request: pytest.FixtureRequest, _postgres_template: str | None
) -> Iterator[str | None]:
    """On PostgreSQL, one database for a module whose tests share a project made by a module fixture.

    (Module fixtures are set up before any test's own database exists, and the project they make must
    stay with its database for every test of the module, as its SQLite file does.)
    """
    items = (item for item in request.session.items if item.getparent(pytest.Module) is request.node)
    if _postgres_template is None or not any(map(_uses_shared_test_fixtures, items)):
        yield None
        return
    url = server.create_database(template=_postgres_template)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _point_projects_at(url, monkeypatch)
        try:
            yield url
        finally:
            server.drop_database(url)


@pytest.fixture(autouse=True)
def backend_url(
    _postgres_template: str | None, _module_backend_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str | None]:
    """On PostgreSQL, this test's own database (its URL), where projects and `db` live; None on SQLite."""
    if _postgres_template is None or _module_backend_url is not None:
        yield _module_backend_url
        return
    url = server.create_database(template=_postgres_template)
    _point_projects_at(url, monkeypatch)
    try:
        yield url
    finally:
        server.drop_database(url)


@pytest.fixture
def no_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's RALPH_DB_URL kept out: the test's projects use their own database."""
    monkeypatch.delenv("RALPH_DB_URL", raising=False)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's SQLite database file lives."""
    return tmp_path / "ralph.db"


@pytest.fixture
def db(request: pytest.FixtureRequest, backend_url: str | None) -> Iterator[Database]:
    """A fresh, migrated database: SQLite in the test's temporary folder, or the test's PostgreSQL one."""
    database = Database(backend_url or sqlite_url(request.getfixturevalue("db_path")))
    yield database
    database.dispose()


@pytest.fixture
def features(db: Database) -> FeatureService:
    return FeatureService(db)


@pytest.fixture
def disciplines(db: Database) -> DisciplineService:
    return DisciplineService(db)


@pytest.fixture
def tasks(db: Database) -> TaskService:
    return TaskService(db)


@pytest.fixture
def comments(db: Database) -> CommentService:
    return CommentService(db)

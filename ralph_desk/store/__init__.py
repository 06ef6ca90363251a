"""The database: schema, engine, migrations and repositories. ORM rows never leave this package."""

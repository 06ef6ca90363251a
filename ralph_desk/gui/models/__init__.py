"""Qt item models: thin adapters over plain lists of records."""

"""Pure rules and data: enums, records, the tool registry, post-processing. No I/O."""

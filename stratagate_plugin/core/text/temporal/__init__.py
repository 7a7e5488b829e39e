"""Time expressions: patterns, calendar arithmetic and their resolution to UTC intervals."""

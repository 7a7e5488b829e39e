"""The deterministic embedded model: summaries, event cards and relations by rule."""

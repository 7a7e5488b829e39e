"""The knowledge graph (spec §4): what is true now, and what we believed when."""

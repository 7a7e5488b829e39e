"""The topic catalog (spec §5): chapters, sections and overview paragraphs over events."""

"""Derivation: the model-made views (L0–L2) and event cards, run as owned jobs."""

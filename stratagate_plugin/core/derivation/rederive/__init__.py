"""Blocks derived offline because the model failed, run on the model again."""

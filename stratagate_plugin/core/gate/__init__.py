"""The evidence gate: batches, assessments, adoption receipts and reinforcement."""

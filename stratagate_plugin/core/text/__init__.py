"""Text rules shared by every capability: search terms, word forms, token budgets, time."""

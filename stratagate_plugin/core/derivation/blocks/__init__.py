"""A block's summary and extraction jobs, what they read and how they write."""

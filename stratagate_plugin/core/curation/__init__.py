"""The memory actions a person takes by hand, and what they read of one item."""

"""memory_remember: the three-phase gate that adds, merges or reinforces agent memory."""

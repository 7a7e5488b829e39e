"""Memory spaces: the namespaces memories live in, their counts and block settings."""

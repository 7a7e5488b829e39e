"""The memory plugin's pages of the web app, registered through ``register_web``.

Views call the engine's services (``StrataGate``) only, never the store."""

"""The web app: ``shell`` is the harness's app (chat, navigation, safety); ``memory`` holds
the memory plugin's pages, which the plugin registers through ``register_web``."""

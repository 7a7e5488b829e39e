"""The memory engine: framework-free rule modules, the store, and the façade.

Nothing under ``core`` imports the host, the web app, pluggy, starlette or jinja2
(``tests/test_import_layers.py`` enforces it).
"""

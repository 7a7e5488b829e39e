"""The harness's web app shell: it knows sessions and plugins' sections, nothing of memory."""

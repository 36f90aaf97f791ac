"""The web viewer at `/ui`: tasks, episodes and evaluation campaigns as server-rendered HTML, read-only.

People debugging an agent would rather look than read JSON. The pages read through the services the REST API
uses (domain registry, episode service, store, scorer) and the documented `results.jsonl` of evaluation runs;
every page is a GET and no page calls anything that changes a sandbox. Templates (Jinja2) and one CSS file
ship inside this package: there is no build step, no script and nothing fetched from elsewhere.
"""

from env_server.ui.app import install_viewer

__all__ = ["install_viewer"]

"""The environment server: sandboxed business databases behind a REST API."""

"""Code both sides use: wire models, task schema and the HTTP client."""

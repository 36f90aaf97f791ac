"""The MCP adapter: every episode's tools over the Model Context Protocol (official `mcp` SDK, 2.x)."""

from env_server.mcp.endpoint import MCP_PATH, McpEndpoint

__all__ = ["MCP_PATH", "McpEndpoint"]

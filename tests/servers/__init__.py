"""Real MCP servers (the SDK's own ``MCPServer``) that the bridge tests talk to."""

// The MCP area: the MCP server over Streamable HTTP at /v1/mcp (docs/mcp.md).
// The only file of the area that app.ts imports (docs/architecture.md).
export { mountMcp } from "./mcp";

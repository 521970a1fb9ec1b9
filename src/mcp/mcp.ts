import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { primaryEnv } from "../http/d1-sessions";
import { ApiError } from "../http/errors";
import { isTwinOrganizationId } from "../lib/ids";
import { addResources } from "./resources";
import { TEST_MODE_TOOLS } from "./tool-permissions";
import { requestFor, toolsFor, toolsOf, type Tool } from "./tools";

// The MCP server (issue 41, docs/mcp.md): Streamable HTTP at /v1/mcp, stateless (one server and
// transport per request, JSON answers, no session), for an API key. Its tools are the API
// document's operations that the key may call; a call is the operation's own request sent
// through the app with the same key, so every guard, limit, quota and audit line applies.

/** Headers a tool call carries over from the MCP request: the credential and the version. */
const FORWARDED = ["X-API-Key", "Authorization", "Queue-Version"];

export function mountMcp(app: OpenAPIHono<AppEnv>, documentOf: (origin: string) => Record<string, unknown>): void {
  let tools: Tool[] | null = null;
  app.all("/v1/mcp", async (c) => {
    const principal = c.get("principal");
    if (principal.kind === "anonymous")
      throw new ApiError("AUTHENTICATION_ERROR", "The MCP server needs an API key (X-API-Key or Authorization: Bearer qk_live_…)");
    if (principal.kind !== "apiKey" || principal.widgetOnly) {
      throw new ApiError("AUTHORIZATION_ERROR", "The MCP server takes an organization's API key, not a session or a widget key");
    }
    const origin = new URL(c.req.url).origin;
    tools ??= toolsOf(documentOf(origin));
    const permitted = toolsFor(tools, principal.permissions, isTwinOrganizationId(principal.organizationId));
    const server = mcpServer(c, (request) => app.fetch(request, primaryEnv(c), c.executionCtx), tools, permitted, origin);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    // The body guard has read the body already (and checked it is JSON): hand the parsed value over.
    const parsedBody = c.req.method === "POST" ? JSON.parse((await c.req.text()) || "null") : undefined;
    const response = await transport.handleRequest(c.req.raw, { parsedBody });
    c.executionCtx.waitUntil(server.close());
    return response;
  });
}

function mcpServer(
  c: Context<AppEnv>,
  send: (request: Request) => Response | Promise<Response>,
  all: readonly Tool[],
  permitted: readonly Tool[],
  origin: string,
): Server {
  // The SDK's default validator (Ajv) generates code at run time, which Workers refuse; this one interprets.
  const server = new Server(
    { name: "queue-service", version: "1.0.0" },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  addResources(server, async (method, path) => {
    const answer = await send(new Request(new URL(path, origin), { method, headers: forwarded(c) }));
    const text = await answer.text();
    return { status: answer.status, body: text === "" ? null : JSON.parse(text) };
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: permitted.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const name = request.params.name;
    if (!all.some((t) => t.name === name)) throw new McpError(ErrorCode.InvalidParams, `No tool named ${name}`);
    const tool = permitted.find((t) => t.name === name);
    if (tool === undefined) {
      const refusal = {
        code: "AUTHORIZATION_ERROR",
        message: TEST_MODE_TOOLS.has(name)
          ? `Only a test key (qk_test_…, created with mode: test) may call ${name}`
          : `This API key may not call ${name} (it needs ${all.find((t) => t.name === name)!.permission})`,
      };
      return { isError: true, content: [{ type: "text" as const, text: JSON.stringify({ success: false, error: refusal }) }] };
    }
    const built = requestFor(tool, (request.params.arguments ?? {}) as Record<string, unknown>, origin, forwarded(c));
    if (!(built instanceof Request)) throw new McpError(ErrorCode.InvalidParams, `Missing argument ${built.missing}`);
    const answer = await send(built);
    const text = await answer.text();
    return { isError: answer.status >= 400, content: [{ type: "text" as const, text: text === "" ? `HTTP ${answer.status}` : text }] };
  });
  return server;
}

/** The caller's credential and version, for a request the server sends through the app on its behalf. */
function forwarded(c: Context<AppEnv>): Headers {
  const headers = new Headers();
  for (const h of FORWARDED) {
    const value = c.req.header(h);
    if (value !== undefined) headers.set(h, value);
  }
  return headers;
}

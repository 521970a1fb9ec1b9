import type { Permission } from "../domain/permissions";
import { TEST_MODE_TOOLS, TOOL_PERMISSIONS } from "./tool-permissions";

// The MCP tools, made from the API document (docs/mcp.md): one tool per operation, named by its
// operationId, described by its summary and description, its input the operation's path and
// query parameters beside `body` (the request body's schema), with every $ref inlined so a
// client needs nothing else. Calling a tool is the operation's request, built here.

type Json = Record<string, any>;

export interface Tool {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, Json>; required: string[]; additionalProperties: false };
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  permission: Permission | null;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Inlines `#/components/…` references (a reference to itself is left as an open object). */
function inline(doc: Json, value: unknown, seen: readonly string[] = []): any {
  if (Array.isArray(value)) return value.map((v) => inline(doc, v, seen));
  if (value === null || typeof value !== "object") return value;
  const ref = (value as Json).$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    if (seen.includes(ref)) return { type: "object" };
    const target = ref
      .slice(2)
      .split("/")
      .reduce<any>((node, key) => node?.[key], doc);
    return inline(doc, target ?? {}, [...seen, ref]);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) if (k !== "example" && k !== "examples") out[k] = inline(doc, v, seen);
  return out;
}

/** Every operation of the document that is a tool (tool-permissions.ts), in document order. */
export function toolsOf(doc: Json): Tool[] {
  const tools: Tool[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op || !(op.operationId in TOOL_PERMISSIONS)) continue;
      const properties: Record<string, Json> = {};
      const required: string[] = [];
      const pathParams: string[] = [];
      const queryParams: string[] = [];
      for (const raw of op.parameters ?? []) {
        const p = inline(doc, raw) as Json;
        if (p.in !== "path" && p.in !== "query") continue;
        properties[p.name] = { ...(p.schema ?? {}), ...(p.description ? { description: p.description } : {}) };
        if (p.required) required.push(p.name);
        (p.in === "path" ? pathParams : queryParams).push(p.name);
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      if (body) {
        properties.body = { ...inline(doc, body), description: "The request body" };
        if (op.requestBody.required) required.push("body");
      }
      tools.push({
        name: op.operationId,
        description: [op.summary, op.description].filter(Boolean).join("\n\n"),
        inputSchema: { type: "object", properties, required, additionalProperties: false },
        method: method.toUpperCase(),
        path,
        pathParams,
        queryParams,
        permission: TOOL_PERMISSIONS[op.operationId] ?? null,
      });
    }
  }
  return tools;
}

/** The tools a key with these permissions sees; the test-mode ones only for a test key. */
export function toolsFor(tools: readonly Tool[], permissions: ReadonlySet<Permission>, testKey: boolean): Tool[] {
  return tools.filter((t) => (t.permission === null || permissions.has(t.permission)) && (testKey || !TEST_MODE_TOOLS.has(t.name)));
}

/** The operation's request for a call's arguments; null names the missing path parameter. */
export function requestFor(tool: Tool, args: Json, origin: string, headers: HeadersInit): Request | { missing: string } {
  let path = tool.path;
  for (const name of tool.pathParams) {
    const value = args[name];
    if (value === undefined || value === null || value === "") return { missing: name };
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  }
  const url = new URL(path, origin);
  for (const name of tool.queryParams) {
    const value = args[name];
    if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  const init: RequestInit = { method: tool.method, headers: new Headers(headers) };
  if (args.body !== undefined && tool.method !== "GET" && tool.method !== "DELETE") {
    (init.headers as Headers).set("Content-Type", "application/json");
    init.body = JSON.stringify(args.body);
  }
  return new Request(url, init);
}

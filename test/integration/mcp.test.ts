import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { keyPermissions } from "../../src/domain/permissions";
import { NOT_TOOLS, TEST_MODE_TOOLS, TOOL_PERMISSIONS } from "../../src/mcp/tool-permissions";
import { call, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, walkIn } from "../helpers/fixtures";
import { settle } from "../helpers/catalog";

// The MCP server at /v1/mcp (issue 41), driven by the official SDK's client over Streamable HTTP,
// its fetch going to the Worker: initialize, the tools a key sees, a call that creates a ticket
// through the app's own route, and a read-only key refused on a write tool.

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function connect(headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL("https://api.test/v1/mcp"), {
    fetch: (url, init) => SELF.fetch(url, init),
    requestInit: { headers },
  });
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The document's operations that take an API key, by operationId. */
async function apiKeyOperations(): Promise<string[]> {
  const doc = (await (await SELF.fetch("https://api.test/v1/openapi.json")).json()) as any;
  const ids: string[] = [];
  for (const item of Object.values<any>(doc.paths))
    for (const op of Object.values<any>(item))
      if (op?.operationId && (op.security ?? []).some((s: Record<string, unknown>) => "apiKey" in s)) ids.push(op.operationId);
  return ids;
}

function expectedTools(permissions: string[], operations: string[], testKey = false): string[] {
  const granted = keyPermissions(permissions);
  return operations
    .filter((id) => id in TOOL_PERMISSIONS)
    .filter((id) => testKey || !TEST_MODE_TOOLS.has(id))
    .filter((id) => TOOL_PERMISSIONS[id] === null || granted.has(TOOL_PERMISSIONS[id]!))
    .sort();
}

describe("the MCP server", () => {
  it("initializes and lists as tools exactly the operations the key may call", async () => {
    const f = await queueFixture("pro");
    const operations = await apiKeyOperations();
    // Every operation a key can call is a tool or excluded with a reason.
    expect(operations.filter((id) => !(id in TOOL_PERMISSIONS) && !(id in NOT_TOOLS))).toEqual([]);

    const { key: readKey } = await createApiKey(f.owner, f.organizationId, ["read"]);
    const reader = await connect({ "X-API-Key": readKey });
    expect(reader.getServerVersion()?.name).toBe("queue-service");
    expect(reader.getServerCapabilities()?.tools).toBeDefined();
    const readTools = (await reader.listTools()).tools;
    expect(readTools.map((t) => t.name).sort()).toEqual(expectedTools(["read"], operations));
    expect(readTools.map((t) => t.name)).toContain("getQueue");
    expect(readTools.map((t) => t.name)).not.toContain("createWalkInTicket");
    expect(readTools.map((t) => t.name)).not.toContain("callNext");

    const { key: writeKey } = await createApiKey(f.owner, f.organizationId, ["write"]);
    const writer = await connect({ Authorization: `Bearer ${writeKey}` });
    const writeTools = (await writer.listTools()).tools;
    expect(writeTools).toHaveLength(expectedTools(["write"], operations).length);
    expect(writeTools.length).toBeGreaterThan(readTools.length);
    // Name, description and input schema come from the document.
    const walkIn = writeTools.find((t) => t.name === "createWalkInTicket")!;
    expect(walkIn.description).toContain("Needs QUEUE_OPERATE");
    expect(walkIn.inputSchema).toMatchObject({ type: "object", required: ["queueId"] });
    expect(Object.keys(walkIn.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["queueId", "body"]));
    expect(JSON.stringify(walkIn.inputSchema)).not.toContain("$ref");
  });

  it("the test-mode tools are listed to test keys only; a live key calling one is refused", async () => {
    const f = await queueFixture("pro");
    const operations = await apiKeyOperations();
    const { key: liveKey } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const live = await connect({ "X-API-Key": liveKey });
    const liveTools = (await live.listTools()).tools.map((t) => t.name);
    expect(liveTools.sort()).toEqual(expectedTools(["admin"], operations));
    expect(liveTools).not.toContain("getTestMode");
    expect(liveTools).not.toContain("resetTestMode");
    const refused = await live.callTool({ name: "getTestMode", arguments: {} });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("AUTHORIZATION_ERROR");

    const testKey = expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/api-keys`, {
        token: f.owner.token,
        body: { name: "sandbox", permissions: ["admin"], mode: "test" },
      }),
      201,
    ).key;
    const sandbox = await connect({ "X-API-Key": testKey });
    const testTools = (await sandbox.listTools()).tools.map((t) => t.name);
    expect(testTools.sort()).toEqual(expectedTools(["admin"], operations, true));
    expect(testTools).toEqual(expect.arrayContaining([...TEST_MODE_TOOLS]));
    const mode = await sandbox.callTool({ name: "getTestMode", arguments: {} });
    expect(mode.isError).toBe(false);
    expect(JSON.parse((mode.content as { text: string }[])[0]!.text).data.liveOrganizationId).toBe(f.organizationId);
  });

  it("tools/call creates a ticket through the API's own route", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["write"]);
    const client = await connect({ "X-API-Key": key });
    const result: any = await client.callTool({ name: "createWalkInTicket", arguments: { queueId: f.queueId, body: { partySize: 2 } } });
    expect(result.isError, JSON.stringify(result)).toBe(false);
    const answer = JSON.parse(result.content[0].text);
    expect(answer).toMatchObject({ success: true, data: { queueId: f.queueId, status: "waiting", partySize: 2 } });
    const ticket = expectOk(await call("GET", `/v1/tickets/${answer.data.id}`, { apiKey: key }));
    expect(ticket).toMatchObject({ id: answer.data.id, status: "waiting" });

    // A read tool with a query parameter, and the route's own validation on bad input.
    const listed: any = await client.callTool({ name: "listQueueTickets", arguments: { queueId: f.queueId, status: "waiting" } });
    expect(JSON.parse(listed.content[0].text).data.map((t: any) => t.id)).toEqual([answer.data.id]);
    const bad: any = await client.callTool({ name: "createWalkInTicket", arguments: { queueId: f.queueId, body: { partySize: -1 } } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse(bad.content[0].text).error).toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("a read-only key is refused on a write tool, and nothing is created", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["read"]);
    const client = await connect({ "X-API-Key": key });
    const result: any = await client.callTool({ name: "createWalkInTicket", arguments: { queueId: f.queueId } });
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0].text).error).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect(expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { apiKey: key }))).toEqual([]);
    await expect(client.callTool({ name: "teleportTicket", arguments: {} })).rejects.toThrow(/No tool named teleportTicket/);
  });

  it("another organization's queue answers as the API does; no key or a session is refused", async () => {
    const f = await queueFixture("pro");
    const other = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["write"]);
    const client = await connect({ "X-API-Key": key });
    const theirs: any = await client.callTool({ name: "createWalkInTicket", arguments: { queueId: other.queueId } });
    expect(theirs.isError).toBe(true);
    expect(JSON.parse(theirs.content[0].text).error.code).toBe("NOT_FOUND");

    const init = {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: "{}",
    };
    const anonymous = await SELF.fetch("https://api.test/v1/mcp", init);
    expect(anonymous.status).toBe(401);
    const session = await SELF.fetch("https://api.test/v1/mcp", {
      ...init,
      headers: { ...init.headers, Authorization: `Bearer ${f.owner.token}` },
    });
    expect(session.status).toBe(403);
    expect(((await session.json()) as any).error.code).toBe("AUTHORIZATION_ERROR");
  });

  it("resources: today's figures and each queue's live state, read through the API with the key; another organization's queue is refused", async () => {
    const f = await queueFixture("pro");
    await walkIn(f.owner, f.queueId);
    await walkIn(f.owner, f.queueId);
    // The day's figures are read from D1's projection: the room's drain has reached it first
    // (else the two reads compared below could fall on either side of it).
    await settle(f.queueId);
    const { key } = await createApiKey(f.owner, f.organizationId, ["read"]);
    const client = await connect({ "X-API-Key": key });
    expect(client.getServerCapabilities()?.resources).toBeDefined();

    const listed = (await client.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(["queue-service://today", `queue-service://queues/${f.queueId}`]);
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    expect(templates.map((t) => t.uriTemplate)).toEqual(["queue-service://queues/{queueId}"]);

    const state = await client.readResource({ uri: `queue-service://queues/${f.queueId}` });
    const live = JSON.parse((state.contents[0] as { text: string }).text);
    expect(live.queue).toMatchObject({ id: f.queueId, waitingCount: 2 });
    expect(live.waiting).toHaveLength(2);
    expect(live.waiting[0].status).toBe("waiting");

    const today = await client.readResource({ uri: "queue-service://today" });
    const figures = JSON.parse((today.contents[0] as { text: string }).text);
    const { generatedAt: _at, ...expected } = expectOk(await call("GET", "/v1/business/dashboard", { apiKey: key }));
    expect(figures).toMatchObject(expected);
    expect(figures.organizationId).toBe(f.organizationId);

    const other = await queueFixture("pro");
    await expect(client.readResource({ uri: `queue-service://queues/${other.queueId}` })).rejects.toThrow(/NOT_FOUND/);
    await expect(client.readResource({ uri: "queue-service://nothing" })).rejects.toThrow(/No resource/);
  });
});

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// The MCP server's resources (docs/mcp.md): what an assistant reads rather than calls. Each is
// read through the app with the caller's key, like a tool call, so the key's permissions, the
// organization's isolation and the envelope are the API's own:
//   queue-service://today            today's figures (GET /v1/business/dashboard)
//   queue-service://queues/{queueId} a queue's live state: its record and the next waiting tickets

export const TODAY_URI = "queue-service://today";
const QUEUE_PREFIX = "queue-service://queues/";
export const QUEUE_TEMPLATE = `${QUEUE_PREFIX}{queueId}`;
/** The waiting tickets a queue's state shows, first in line first. */
const WAITING_SHOWN = 20;

type Send = (method: string, path: string) => Promise<{ status: number; body: any }>;

function refused(answer: { status: number; body: any }): McpError {
  const error = answer.body?.error ?? { code: `HTTP_${answer.status}`, message: "The API refused the read" };
  return new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`, error);
}

async function read(send: Send, path: string): Promise<any> {
  const answer = await send("GET", path);
  if (answer.status >= 400 || !answer.body?.success) throw refused(answer);
  return answer.body.data;
}

/** Adds the resources to a server whose `send` reaches the app with the caller's credential. */
export function addResources(server: Server, send: Send): void {
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: QUEUE_TEMPLATE,
        name: "A queue's live state",
        description: "The queue's record (status, waiting and serving counts, estimated wait) and its next waiting tickets",
        mimeType: "application/json",
      },
    ],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const answer = await send("GET", "/v1/business/queues?limit=100");
    const queues: { id: string; name: string }[] = answer.status < 400 && answer.body?.success ? answer.body.data : [];
    return {
      resources: [
        {
          uri: TODAY_URI,
          name: "Today's figures",
          description: "Tickets created since 00:00 UTC by status, average wait and service time (needs read:analytics)",
          mimeType: "application/json",
        },
        ...queues.map((q) => ({
          uri: `${QUEUE_PREFIX}${q.id}`,
          name: `Queue ${q.name}: live state`,
          mimeType: "application/json",
        })),
      ],
    };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    let data: unknown;
    if (uri === TODAY_URI) {
      data = await read(send, "/v1/business/dashboard");
    } else if (uri.startsWith(QUEUE_PREFIX) && /^[A-Za-z0-9_-]{1,64}$/.test(uri.slice(QUEUE_PREFIX.length))) {
      const queueId = uri.slice(QUEUE_PREFIX.length);
      const [queue, waiting] = await Promise.all([
        read(send, `/v1/queues/${queueId}`),
        read(send, `/v1/queues/${queueId}/tickets?status=waiting&limit=${WAITING_SHOWN}`),
      ]);
      data = { queue, waiting };
    } else {
      throw new McpError(ErrorCode.InvalidParams, `No resource ${uri} (see resources/list and resources/templates/list)`);
    }
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(data) }] };
  });
}

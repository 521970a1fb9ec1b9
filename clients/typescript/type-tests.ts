// Compile-time checks of the client's types (`npm run typecheck:client`): each @ts-expect-error
// line must be refused, so the types cannot quietly widen to any.
import { QueueApiError, QueueClient, verifyWebhook, type ErrorCode } from "@queue-service/client";

const client = new QueueClient({ baseUrl: "http://127.0.0.1:1", apiKey: "qk_live_x" });

export async function checks(): Promise<void> {
  const queueId = "que_x";
  const tickets = await client.get("/v1/queues/{queueId}/tickets", { path: { queueId }, query: { status: "waiting", limit: 5 } });
  const first: string | undefined = tickets.data[0]?.displayCode;
  const next: string | null = tickets.meta.nextCursor;
  (void first, next);
  // @ts-expect-error: not a ticket state
  await client.get("/v1/queues/{queueId}/tickets", { path: { queueId }, query: { status: "sleeping" } });
  // @ts-expect-error: no such query parameter
  await client.get("/v1/queues/{queueId}/tickets", { path: { queueId }, query: { colour: "red" } });
  // @ts-expect-error: the path parameter is required
  await client.get("/v1/queues/{queueId}/tickets", { query: { limit: 5 } });
  // @ts-expect-error: no such path
  await client.get("/v1/nowhere");
  // @ts-expect-error: call-next is a POST
  await client.get("/v1/queues/{queueId}/call-next", { path: { queueId } });
  // @ts-expect-error: partySize is a number
  await client.post("/v1/queues/{queueId}/operator-join", { path: { queueId }, body: { partySize: "2" } });
  // @ts-expect-error: one queue is not a list read by cursor
  client.paginate("/v1/queues/{queueId}", { path: { queueId } });
  for await (const ticket of client.paginate("/v1/queues/{queueId}/tickets", { path: { queueId } })) {
    const status: "waiting" | "called" | "serving" | "served" | "skipped" | "expired" | "cancelled" | "held" = ticket.status;
    void status;
    // @ts-expect-error: tickets have no such field
    void ticket.colour;
  }
  try {
    await client.post("/v1/queues/{queueId}/call-next", { path: { queueId }, body: {} });
  } catch (err) {
    if (err instanceof QueueApiError) {
      const code: ErrorCode | "UNEXPECTED_RESPONSE" = err.code;
      const field: string | null = err.field;
      // @ts-expect-error: not an error code
      if (err.code === "QUEUE_ASLEEP") void code;
      void field;
    }
  }
  const event = await verifyWebhook("{}", new Headers(), "whsec_x");
  const type: string = event.type;
  void type;
}

// Walk-in, call, the waiting line by cursor, and a typed error, against a running service.
//   QUEUE_API_URL=http://127.0.0.1:8787 QUEUE_API_KEY=qk_live_… npx tsx example.ts
// (`npm run dev` prints its URL and the demo key; QUEUE_ID picks a queue, else the first one listed.)
import { QueueApiError, QueueClient } from "@queue-service/client";

export async function main(): Promise<void> {
  const baseUrl = process.env.QUEUE_API_URL;
  const apiKey = process.env.QUEUE_API_KEY;
  if (!baseUrl || !apiKey) throw new Error("Set QUEUE_API_URL and QUEUE_API_KEY (npm run dev prints both)");
  const client = new QueueClient({ baseUrl, apiKey });

  // Lists are read by cursor: paginate() follows meta.nextCursor for as long as there are pages.
  let queueId = process.env.QUEUE_ID;
  for await (const queue of client.paginate("/v1/business/queues", { query: { limit: 10 } })) {
    queueId ??= queue.id;
    if (queue.id === queueId) console.log(`queue ${queue.name} (${queue.id}): ${queue.waitingCount} waiting`);
  }
  if (!queueId) throw new Error("This key sees no queue: create one (POST /v1/business/queues) or set QUEUE_ID");

  // A POST carries an Idempotency-Key: retried after a 503 or a dropped connection, it is done once.
  const walkIn = await client.post("/v1/queues/{queueId}/operator-join", { path: { queueId }, body: { visitorName: "Awa", partySize: 2 } });
  console.log(`ticket ${walkIn.data.displayCode}, position ${walkIn.data.position ?? "-"}`);

  const called = await client.post("/v1/queues/{queueId}/call-next", { path: { queueId }, body: {} });
  console.log(`now calling ${called.data.displayCode} (${called.data.status})`);

  // Typed query parameters: status is one of the ticket states.
  let waiting = 0;
  for await (const ticket of client.paginate("/v1/queues/{queueId}/tickets", {
    path: { queueId },
    query: { status: "waiting", limit: 50 },
  })) {
    if (ticket.status === "waiting") waiting += 1;
  }
  console.log(`${waiting} waiting after the call`);

  // Errors are typed: status, code, the field at fault, where the code is explained, the request id.
  try {
    await client.post("/v1/queues/{queueId}/operator-join", { path: { queueId }, body: { visitorName: "Bo", partySize: 0 } });
  } catch (err) {
    if (!(err instanceof QueueApiError)) throw err;
    console.log(`refused: ${err.status} ${err.code} on ${err.field} (${err.docUrl}, request ${err.requestId})`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

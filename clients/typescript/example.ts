// Join a queue, call the next ticket, and follow the queue live — type-checked under --strict
// (`npm run typecheck:client`). Run it against `npm run dev` with the demo key printed there.
import { QueueClient } from "./client";

const baseUrl = "http://127.0.0.1:8787";
const client = new QueueClient({ baseUrl, apiKey: "qk_live_d3m0k3y0d3m0k3y0d3m0k3y0d3m0k3y0d3m0k3y0425da9cb21993fe76dd98937c7f325a8" });
// The demo queue id `npm run dev` prints (its queue is created through the API on first start).
const queueId = "que_d3m0q000000000000000";

export async function main(): Promise<void> {
  const walkIn = await client.request("post", "/v1/queues/{queueId}/operator-join", { queueId }, { visitorName: "Awa", partySize: 2 });
  console.log(`ticket ${walkIn.data.displayCode}, position ${walkIn.data.position ?? "-"}`);

  const called = await client.request("post", "/v1/queues/{queueId}/call-next", { queueId }, {});
  console.log(`now calling ${called.data.displayCode} (${called.data.status})`);

  const queue = await client.request("get", "/v1/queues/{queueId}", { queueId });
  console.log(`${queue.data.name}: ${queue.data.waitingCount} waiting, about ${queue.data.estimatedWaitMinutes} min`);

  const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/widget/ws`);
  socket.addEventListener("open", () => socket.send(JSON.stringify({ action: "subscribe", queueId })));
  socket.addEventListener("message", (event: MessageEvent<string>) => {
    const message: unknown = JSON.parse(event.data);
    if (typeof message === "object" && message !== null && "type" in message && message.type === "queue_update") {
      console.log("queue update", message);
      socket.close();
    }
  });
}

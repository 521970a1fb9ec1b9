// Notifications benchmark (issue 14), the last part of `npm run bench` (also alone:
//   node test/bench/notifications.mjs).
// Under `wrangler dev` (local Queues, D1, no provider secrets: the outbox provider), prints two
// markdown rows:
//  - throughput: 50 customers, each with a push device, wait in a queue; a `clear` cancels
//    them in one room transaction, so one EVENTS batch of 50 ticket.cancelled events reaches
//    the consumer. Measured: from the clear's answer until all 100 deliveries (50 in-app +
//    50 push through the outbox provider) are recorded. Includes the queue's batch timeout
//    (max_batch_timeout = 1 s) and the room's outbox alarm.
//  - latency: call-next → the customer's ticket.called listed by GET /v1/notifications,
//    p50/p99 over BENCH_NOTIFY_SAMPLES calls.
import { client, summarize } from "./load.mjs";
import { startWorker } from "./server.mjs";

const BATCH = Number(process.env.BENCH_NOTIFY_BATCH ?? 50);
const SAMPLES = Number(process.env.BENCH_NOTIFY_SAMPLES ?? 30);
const POLL_MS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => process.stderr.write(`[bench notifications] ${line}\n`);

// `BENCH_ONLY=<parts>` (see run.mjs) runs this part only when it names `notifications`.
if (process.env.BENCH_ONLY && !process.env.BENCH_ONLY.split(",").includes("notifications")) process.exit(0);

const worker = await startWorker();
const call = client(worker.direct ?? worker.base);

async function register(accountType) {
  const email = `${accountType}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@bench.example`;
  const body = { email, password: "bench-password-123", firstName: "Bench", lastName: accountType, accountType };
  const { data } = await call("POST", "/v1/auth/register", { body });
  return { token: data.session.token, userId: data.user.id };
}

async function until(check, timeoutMs = 60_000) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return;
    await sleep(POLL_MS);
  }
  throw new Error("timed out waiting for notifications");
}

try {
  const owner = await register("business");
  const org = (
    await call("POST", "/v1/organizations", { token: owner.token, body: { name: "Bench", slug: `bench-${Date.now()}`, type: "banking" } })
  ).data;
  await call("POST", `/__bench/organizations/${org.id}/plan`, { body: { plan: "enterprise" } });
  const location = (
    await call("POST", "/v1/locations", {
      token: owner.token,
      body: { organizationId: org.id, name: "Bench", address: "1 bench street", latitude: 45.76, longitude: 4.84 },
    })
  ).data;
  const service = (
    await call("POST", "/v1/services", {
      token: owner.token,
      body: { name: "Bench", locationIds: [location.id], serviceTypeId: "st_bank_teller" },
    })
  ).data;
  const newQueue = async (name) =>
    (await call("POST", "/v1/business/queues", { token: owner.token, body: { serviceId: service.id, name } })).data.id;
  const deliveries = async () =>
    (await call("GET", `/v1/organizations/${org.id}/notification-deliveries?limit=1`, { token: owner.token })).body.meta.total;

  // Throughput: one batch of BATCH events, each to in-app + one push device.
  log(`registering ${BATCH} customers`);
  const queueId = await newQueue("Throughput");
  for (let i = 0; i < BATCH; i++) {
    const c = await register("customer");
    await call("POST", "/v1/push/register", { token: c.token, body: { platform: "android", fcmToken: `bench-${c.userId}` } });
    await call("POST", `/v1/queues/${queueId}/join`, { token: c.token, body: {} });
  }
  await until(async () => (await deliveries()) >= 2 * BATCH); // the joins' ticket.created, delivered
  const before = await deliveries();
  const t0 = performance.now();
  await call("POST", `/v1/queues/${queueId}/clear`, { token: owner.token });
  const tClear = performance.now();
  await until(async () => (await deliveries()) >= before + 2 * BATCH);
  const elapsed = (performance.now() - tClear) / 1000;

  // Latency: call-next → listed.
  log(`timing ${SAMPLES} call-next → in-app`);
  const latencyQueue = await newQueue("Latency");
  const customer = await register("customer");
  const samples = [];
  for (let i = 0; i < SAMPLES; i++) {
    const ticket = (await call("POST", `/v1/queues/${latencyQueue}/join`, { token: customer.token, body: {} })).data;
    const start = performance.now();
    await call("POST", `/v1/queues/${latencyQueue}/call-next`, { token: owner.token, body: {} });
    await until(async () => {
      const { data } = await call("GET", "/v1/notifications?limit=5", { token: customer.token });
      return data.some((n) => n.type === "ticket.called" && n.data.ticketId === ticket.id);
    });
    samples.push(performance.now() - start);
    await call("POST", `/v1/tickets/${ticket.id}/cancel`, { token: owner.token });
  }
  const s = summarize(samples);

  console.log("| measure | figure |");
  console.log("|---|---|");
  console.log(
    `| notifications delivered through the consumer (one batch of ${BATCH} events, in-app + push via outbox) | ${((2 * BATCH) / elapsed).toFixed(1)} deliveries/s, ${(BATCH / elapsed).toFixed(1)} notifications/s (${elapsed.toFixed(2)} s from the clear's answer; clear took ${((tClear - t0) / 1000).toFixed(2)} s) |`,
  );
  console.log(`| call-next → in-app notification listed (${s.count} calls) | p50 ${s.p50.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms |`);
} finally {
  worker.stop?.();
}

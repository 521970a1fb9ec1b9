import { reset } from "cloudflare:test";
import { afterAll } from "vitest";

// Integration files that share a runtime (vitest.config.ts) start from empty storage, as the
// isolated ones do: after each file every Durable Object is deleted (its storage and its alarm)
// and aborted, D1 included (the local D1 is an object too), so nothing a file started (a
// room's delivery alarm, a limiter's prune, a hand-off retry) keeps running behind the next.
afterAll(async () => {
  await reset();
});

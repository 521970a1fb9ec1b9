import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach } from "vitest";
import { testClock } from "./clock";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

afterEach(() => testClock.reset());

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { keyPermissions } from "../../src/domain/permissions";

// The README's five-minute quickstart, read as a client would: every curl names a documented
// operation (method and path), and every JSON body parses. (Sending them in order against
// `npm run dev` is done by hand before a release; this keeps the text from drifting.)

const root = path.join(import.meta.dirname, "..", "..");

function quickstart(): string {
  const readme = readFileSync(path.join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Five minutes with the API"));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("no sh block under 'Five minutes with the API'");
  return block[1]!;
}

/** Each curl command (continuation lines joined): method, the path after $API, and its -d body. */
function curls(script: string) {
  return script
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .filter((line) => line.includes("curl "))
    .map((line) => {
      const command = line.slice(line.indexOf("curl "));
      const url = /\$API(\/[^\s"|)]*)/.exec(command)?.[1] ?? "";
      const data = /-d (?:'([^']*)'|"((?:[^"\\]|\\.)*)")/.exec(command);
      const body = data ? (data[1] ?? data[2]!.replace(/\\"/g, '"')) : null;
      const method = /-X (\w+)/.exec(command)?.[1] ?? (body !== null ? "POST" : "GET");
      return { command, method, path: url.split("?")[0]!, body };
    });
}

async function documentedOperations(): Promise<{ method: string; pattern: RegExp }[]> {
  const limiter = {
    hit: async () => ({ allowed: true, retryAfterSeconds: 0, windows: [{ name: "minute", limit: 120, remaining: 119, resetAt: 0 }] }),
  };
  const env = { RATE_LIMITER: { idFromName: () => "ip", get: () => limiter }, DB: { withSession: () => ({ getBookmark: () => null }) } }; // the D1 sessions middleware opens one per request
  const doc = (await (await createApp().request("https://api.test/v1/openapi.json", {}, env)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.keys(item).map((method) => ({
      method: method.toUpperCase(),
      pattern: new RegExp(`^${p.replace(/^\/v1/, "").replace(/\{\w+\}/g, "[^/]+")}$`),
    })),
  );
}

describe("the README quickstart", () => {
  it("every curl is a documented operation, and every JSON body parses", async () => {
    const commands = curls(quickstart());
    expect(commands.length).toBeGreaterThanOrEqual(10);
    const operations = await documentedOperations();
    for (const c of commands) {
      // Shell variables stand for ids the earlier commands answered.
      const concrete = c.path.replace(/\$\w+/g, "x_0");
      expect(
        operations.some((o) => o.method === c.method && o.pattern.test(concrete)),
        `${c.method} ${c.path}: ${c.command}`,
      ).toBe(true);
      if (c.body !== null) expect(() => JSON.parse(c.body!.replace(/\$\w+/g, "x")), c.command).not.toThrow();
    }
  });

  it("the key it creates runs the README's webhooks:listen line as written (GET /v1/events needs manage:webhooks)", () => {
    const readme = readFileSync(path.join(root, "README.md"), "utf8");
    expect(readme).toContain("npm run webhooks:listen -- --forward-to http://127.0.0.1:4000/hooks --api-key $KEY");
    const create = curls(quickstart()).find((c) => c.path === "/organizations/$ORG/api-keys");
    const permissions = JSON.parse(create!.body!).permissions as string[];
    expect(keyPermissions(permissions).has("WEBHOOK_MANAGE")).toBe(true);
    expect(keyPermissions(permissions).has("QUEUE_OPERATE")).toBe(true);
  });
});

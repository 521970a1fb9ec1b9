import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO } from "../../scripts/seed.mjs";

// Issue 41's acceptance for the client package, as an integrator meets it: `npm pack` of
// clients/typescript, the tarball installed into a scratch project under the system's temp
// folder, the README's example compiled there against the installed package (tsc, NodeNext,
// strict, only @types/node beside it) and run with node against `npm run dev` (scripts/dev.mjs,
// as test/browser/run.mjs starts it) on a free port of 127.0.0.1. Bounded: each step has a
// timeout and the service gets SERVICE_START_MS to seed and answer.

const run = promisify(execFile);
const root = path.join(import.meta.dirname, "..", "..");
const packageDir = path.join(root, "clients", "typescript");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
// A loaded machine applies the migrations slowly: BROWSER_SERVICE_START_MS (as for npm run test:browser) gives it longer.
const SERVICE_START_MS = Number(process.env.BROWSER_SERVICE_START_MS) || 300_000;
const STEP_MS = 180_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The README's example: its first ```ts block. */
function readmeExample(): string {
  const block = /```ts\n([\s\S]*?)```/.exec(readFileSync(path.join(packageDir, "README.md"), "utf8"));
  if (!block) throw new Error("clients/typescript/README.md has no ts block");
  return block[1]!;
}

/** Resolves when dev.mjs has printed the demo (queue and desks created); rejects, with its output, if it exits first or takes longer than `ms`. */
function serviceReady(child: ChildProcess, log: { text: string }, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    AbortSignal.timeout(ms).addEventListener("abort", () => reject(new Error(`npm run dev was not ready after ${ms} ms:\n${log.text}`)));
    const look = (chunk: Buffer) => {
      log.text = (log.text + chunk.toString()).slice(-20_000);
      if (log.text.includes("Start here:")) resolve();
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    child.once("exit", (code) => reject(new Error(`npm run dev exited (${code}) before it was ready:\n${log.text}`)));
  });
}

let scratch = "";
let service: ChildProcess | null = null;
let api = "";
const serviceLog = { text: "" };

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), "queue-client-"));
  const port = await freePort();
  api = `http://127.0.0.1:${port}`;
  service = spawn(process.execPath, [path.join(root, "scripts", "dev.mjs"), "--port", String(port), "--ip", "127.0.0.1"], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  await serviceReady(service, serviceLog, SERVICE_START_MS);
}, SERVICE_START_MS + 10_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once("exit", resolve));
    // dev.mjs forwards signals to wrangler; the process group catches workerd too.
    process.kill(-service.pid!, "SIGTERM");
    await exited;
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the client package", () => {
  it("README's example is example.ts, word for word", () => {
    expect(readmeExample()).toBe(readFileSync(path.join(packageDir, "example.ts"), "utf8"));
  });

  it(
    "installs into a scratch project from its packed tarball, and the README's example compiles there and runs against npm run dev",
    async () => {
      // npm pack runs the package's prepack (tsc to dist/) and writes the tarball.
      await run(npm, ["pack", "--pack-destination", scratch], { cwd: packageDir, timeout: STEP_MS });
      const tarball = readdirSync(scratch).find((f) => f.endsWith(".tgz"));
      expect(tarball).toBe("queue-service-client-1.0.0.tgz");

      const project = path.join(scratch, "project");
      mkdirSync(project);
      writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "integrator", private: true, type: "module" }));
      await run(npm, ["install", path.join(scratch, tarball!), "--offline", "--no-audit", "--no-fund"], { cwd: project, timeout: STEP_MS });
      const installed = JSON.parse(readFileSync(path.join(project, "node_modules", "@queue-service", "client", "package.json"), "utf8"));
      expect(installed).toMatchObject({ name: "@queue-service/client", type: "module" });
      expect(Object.keys(installed.dependencies ?? {})).toEqual([]);

      writeFileSync(path.join(project, "example.ts"), readmeExample());
      writeFileSync(
        path.join(project, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            lib: ["ES2022"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            noUncheckedIndexedAccess: true,
            skipLibCheck: false,
            types: ["node"],
            typeRoots: [path.join(root, "node_modules", "@types")],
          },
          files: ["example.ts"],
        }),
      );
      const compiled = await run(process.execPath, [tsc, "-p", project], { cwd: project, timeout: STEP_MS }).catch((e) => e);
      expect(compiled.stdout, "tsc in the scratch project").toBe("");

      const { stdout, stderr } = await run(process.execPath, ["example.js"], {
        cwd: project,
        timeout: 60_000,
        env: { ...process.env, QUEUE_API_URL: api, QUEUE_API_KEY: DEMO.apiKey.value, QUEUE_ID: DEMO.queue.id },
      }).catch((e) => {
        throw new Error(`the example failed: ${e.stderr ?? e}\n${e.stdout ?? ""}\nservice:\n${serviceLog.text}`);
      });
      expect(stderr).toBe("");
      const lines = stdout.trim().split("\n");
      expect(lines[0]).toMatch(new RegExp(`^queue ${DEMO.queue.name} \\(${DEMO.queue.id}\\): \\d+ waiting$`));
      expect(lines[1]).toMatch(/^ticket A-\d{3}, position \d+$/);
      expect(lines[2]).toMatch(/^now calling A-\d{3} \(called\)$/);
      expect(lines[3]).toMatch(/^\d+ waiting after the call$/);
      expect(lines[4]).toMatch(
        new RegExp(`^refused: 400 VALIDATION_ERROR on partySize \\(${api}/v1/errors/VALIDATION_ERROR, request \\S+\\)$`),
      );
      expect(lines).toHaveLength(5);
    },
    STEP_MS * 3,
  );
});

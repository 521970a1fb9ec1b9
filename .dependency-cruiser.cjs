/**
 * The architecture check (npm run check:architecture, run by .ci/run): no import cycles, and the
 * layers of docs/architecture.md. Type-only imports count: a type is a dependency too. There is
 * no baseline: the check reports 0 or fails.
 *
 *   lib ← domain ← db ← http ← areas ← jobs ← app.ts / index.ts / room-host.ts
 *   (providers, ledger, rate-limiter sit beside db: they import only lib, domain, env;
 *    queue-room sits above db: it writes its projection to D1 through db/'s schema and prepared statements)
 * @type {import('dependency-cruiser').IConfiguration}
 */
const AREAS = [
  "access",
  "analytics",
  "api-reference",
  "appointments",
  "audit",
  "billing",
  "calendar",
  "catalog",
  "conversations",
  "desks",
  "entry",
  "identity",
  "notifications",
  "privacy",
  "test-mode",
  "tickets",
  "visits",
  "webhooks",
  "widget",
].join("|");
const AREA = `^src/(${AREAS})/`;
const ENTRY = "^src/(app\\.ts|index\\.ts|room-host\\.ts|jobs/)";

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle ties modules that should be read (and changed) one after the other.",
      from: {},
      to: { circular: true },
    },
    {
      name: "lib-imports-nothing-of-ours",
      severity: "error",
      comment: "src/lib is the bottom layer.",
      from: { path: "^src/lib/" },
      to: { path: "^src/", pathNot: "^src/lib/" },
    },
    {
      name: "domain-imports-only-lib",
      severity: "error",
      comment: "src/domain holds pure rules shared by areas and the room: it imports only itself and src/lib.",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/(domain|lib)/" },
    },
    {
      name: "db-imports-only-domain-and-lib",
      severity: "error",
      comment: "The schema and the client are below every area.",
      from: { path: "^src/db/" },
      to: { path: "^src/", pathNot: "^src/(db|domain|lib)/" },
    },
    {
      name: "platform-pieces-import-only-below",
      severity: "error",
      comment: "providers/, ledger/, rate-limiter/ and env.ts import only lib, domain, env and themselves.",
      from: { path: "^src/(providers/|ledger/|rate-limiter/|env\\.ts$)" },
      to: { path: "^src/", pathNot: "^src/(providers/|ledger/|rate-limiter/|domain/|lib/|env\\.ts$)" },
    },
    {
      name: "http-imports-no-area",
      severity: "error",
      comment:
        "http/ is cross-cutting middleware (envelope, errors, auth and its credential lookups, rate limits, OpenAPI): areas import it, it imports no area, job or entry point.",
      from: { path: "^src/http/" },
      to: { path: "^src/", pathNot: "^src/(http/|db/|domain/|lib/|rate-limiter/|env\\.ts$)" },
    },
    {
      name: "areas-import-nothing-above",
      severity: "error",
      comment: "An area never imports jobs/, app.ts, index.ts or room-host.ts: those call areas, not the reverse.",
      from: { path: AREA },
      to: { path: "^src/(jobs/|app\\.ts$|index\\.ts$|room-host\\.ts$)" },
    },
    {
      name: "entry-points-enter-areas-by-their-index",
      severity: "error",
      comment: "app.ts, index.ts, room-host.ts and jobs/ reach an area only through its index.ts.",
      from: { path: ENTRY },
      to: { path: AREA, pathNot: `${AREA}index\\.ts$` },
    },
    {
      name: "areas-never-import-an-index",
      severity: "error",
      comment:
        "An area's index.ts re-exports its routers for app.ts: an area importing one (its own or another's) would pull routers under services and close cycles. Areas import each other's files (docs/architecture.md says why).",
      from: { path: AREA },
      to: { path: `${AREA}index\\.ts$` },
    },
    {
      name: "routers-never-reach-the-room-or-the-db",
      severity: "error",
      comment:
        "A router validates, authorizes, calls a service and answers: the room and D1 are the services' business. A router reaches D1 only through its area's services, which take Deps (src/http/deps.ts).",
      from: { path: "\\.routes\\.ts$" },
      to: { path: "^src/(queue-room|db)/" },
    },
    {
      name: "room-imports-only-below",
      severity: "error",
      comment:
        "The room is the core: it imports no area, http or job. What it needs from outside (the ledger, the catalog) is given through queue-room/ports.ts by room-host.ts; its projection to D1 is written with db/'s schema and prepared statements (db/ imports only domain and lib).",
      from: { path: "^src/queue-room/" },
      to: { path: "^src/", pathNot: "^src/(queue-room/|db/|domain/|lib/|env\\.ts$)" },
    },
    {
      name: "room-only-through-its-contract",
      severity: "error",
      comment: "Outside queue-room/, only contract.ts is imported (room-host.ts gives the room its ports, index.ts exports it).",
      from: { path: "^src/", pathNot: "^src/(queue-room/|index\\.ts$|room-host\\.ts$)" },
      to: { path: "^src/queue-room/", pathNot: "^src/queue-room/contract\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|clients|public)" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

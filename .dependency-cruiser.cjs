/**
 * The architecture check (npm run check:architecture, run by .ci/run): no import cycles, and
 * the layers of docs/architecture.md. Type-only imports count: a type is a dependency too.
 * Violations that predate the check and belong to another area are listed, each with its rule,
 * in .dependency-cruiser-known-violations.json (npm run check:architecture:baseline rewrites
 * it): the check fails on any other, and the list is meant to shrink to nothing.
 * @type {import('dependency-cruiser').IConfiguration}
 */
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
      name: "domain-imports-only-lib",
      severity: "error",
      comment: "src/domain holds pure rules: it imports only itself and src/lib (and npm packages).",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/(domain|lib)/" },
    },
    {
      name: "routes-never-reach-the-room-or-the-db",
      severity: "error",
      comment: "A route validates, checks permission, calls a service and answers: the room and D1 are the services' business.",
      from: { path: "^src/routes/" },
      to: { path: "^src/(queue-room|db)/" },
    },
    {
      name: "room-never-imports-services-or-http",
      severity: "error",
      comment: "The room is the core: the Worker's services and HTTP layer depend on it, never the reverse.",
      from: { path: "^src/queue-room/" },
      to: { path: "^src/(services|http|routes)/" },
    },
    {
      name: "room-only-through-its-contract",
      severity: "error",
      comment: "Outside queue-room/, only contract.ts is imported (room-host.ts gives the room its ports, index.ts exports it).",
      from: { path: "^src/", pathNot: "^src/(queue-room/|index\\.ts$|room-host\\.ts$)" },
      to: { path: "^src/queue-room/", pathNot: "^src/queue-room/contract\\.ts$" },
    },
    {
      name: "lib-imports-nothing-of-ours",
      severity: "error",
      comment: "src/lib is the bottom layer.",
      from: { path: "^src/lib/" },
      to: { path: "^src/", pathNot: "^src/lib/" },
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

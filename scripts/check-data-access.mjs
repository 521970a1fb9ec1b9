// One way to the database (issue #36), checked in CI after the architecture check:
//  (a) a router (src/<area>/*.routes.ts) never names the D1 binding (`env.DB`): it calls a
//      service, or at most its area's repository;
//  (b) raw SQL on D1 runs only in the allow-listed files below, each with its reason: a call of
//      D1Database's prepare/batch/exec (found by type, whatever the variable is called), or a
//      Drizzle sql`…` template holding a whole statement (SELECT/INSERT/UPDATE/DELETE/WITH…);
//  (c) a use case takes its dependencies as one `Deps` object (src/http/deps.ts): a top-level
//      function of src/ whose first parameter is typed `Env`, `Database` or `D1Database` is
//      allowed only in the layers listed in FIRST_PARAMETER_LAYERS, with their reasons.
// The Durable Objects' own SQLite storage (ctx.storage.sql.exec in queue-room/, ledger/,
// rate-limiter/) is not D1 and not counted.
// Both lists are a ratchet: they hold today's files and must only shrink (goal: at most 20 raw
// call sites in at most 5 files, no router on the binding). A file that leaves a list must be
// removed from it. Each allow-listed file also carries its number of raw call sites: more fails
// (a regression), fewer fails too until the number is lowered. The `as` casts and `batch<any>`
// are held to their ceilings below the same way.
// Usage: node scripts/check-data-access.mjs [--report]   (--report prints the figures too)
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const report = process.argv.includes("--report");

/** Routers that still hand `c.env.DB` to a service (the service should take its dependencies). */
const ROUTERS_ON_THE_BINDING = {};

/** Most `as` casts (not `as const`) in src/, and `batch<any>` calls: both only go down. */
const MAX_CASTS = 174;
const MAX_BATCH_ANY = 0;

/** Files that may run raw SQL on D1: [raw call sites allowed, why]. */
const RAW_SQL = {
  "src/audit/audit.ts": [
    6,
    "an entry inserted only if its change changed a row (INSERT … SELECT … WHERE changes() > 0, no table); the chain's verify walk, whose rowsRead is D1's own count (meta.rows_read)",
  ],
  "src/db/prepared.ts": [
    2,
    "runs Drizzle-built reads and writes prepared once per binding in one D1 batch (no SQL written there; issue 43; the room's drain writes)",
  ],
};

/**
 * Where a function may still take `Env`, `Database` or `D1Database` first (rule c), and why.
 * Everything else (every area's use cases, repositories and statement builders, jobs' steps)
 * takes `Deps`.
 */
const FIRST_PARAMETER_LAYERS = {
  "src/db/": "the data-access layer itself: builds the Drizzle client and prepared statements from the binding",
  "src/http/":
    "cross-cutting middleware: builds `Deps` (deps.ts), the credential statements prepared once per binding, access-change notices",
  "src/providers/": "outbound HTTP clients: read their base URLs and secrets from the bindings, touch no database",
  "src/queue-room/": "the Durable Object's own code: its ports are its bindings (docs/queue-room.md)",
  "src/ledger/": "a Durable Object",
  "src/rate-limiter/": "a Durable Object",
  "src/room-host.ts": "builds the Durable Objects' ports from the bindings",
  "src/jobs/events-consumer.ts": "a queue consumer: the platform calls it with (batch, env); it builds `Deps` once",
  "src/jobs/notifications-delivery.ts": "a queue consumer (batch, env)",
  "src/jobs/webhook-deliveries.ts": "a queue consumer (batch, env)",
  "src/audit/audit.ts": "the chain's sealing and verify walk run on `AuditEnv` (the binding and the audit keys) and raw D1 (rule b)",
};
const firstParameterAllowed = (file) =>
  Object.keys(FIRST_PARAMETER_LAYERS).some((p) => file === p || (p.endsWith("/") && file.startsWith(p)));
const BARE_DEPENDENCY = /^(Env|Database|D1Database)$/;

const isRouter = (f) => /\.routes\.ts$/.test(f) || /^src\/routes\//.test(f);
const STATEMENT = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|REPLACE|CREATE|DROP|ALTER|PRAGMA)\b/i;

const config = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
const program = ts.createProgram(parsed.fileNames, parsed.options);
const checker = program.getTypeChecker();

const rawSites = new Map(); // file → [line]
const routerHits = new Map(); // file → [line]
const bareDependencies = new Map(); // file → ["name:line"]
let useCases = 0; // top-level functions taking Deps first
let casts = 0;
let batchAny = 0;
const sizes = [];
for (const sf of program.getSourceFiles()) {
  const file = path.relative(root, sf.fileName).split(path.sep).join("/");
  if (!file.startsWith("src/")) continue;
  const text = sf.getFullText();
  sizes.push([text.split("\n").length, file]);
  const lineOf = (node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const add = (map, node) => (map.get(file) ?? map.set(file, []).get(file)).push(lineOf(node));
  const visit = (node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ["prepare", "batch", "exec"].includes(node.expression.name.text)
    ) {
      const type = checker.getTypeAtLocation(node.expression.expression);
      const name = type.getSymbol()?.getName() ?? type.aliasSymbol?.getName();
      if (name === "D1Database") add(rawSites, node);
      if (node.expression.name.text === "batch" && node.typeArguments?.some((t) => t.kind === ts.SyntaxKind.AnyKeyword)) batchAny++;
    }
    if (ts.isTaggedTemplateExpression(node) && node.tag.getText(sf) === "sql") {
      const head = ts.isNoSubstitutionTemplateLiteral(node.template) ? node.template.text : node.template.head.text;
      if (STATEMENT.test(head)) add(rawSites, node);
    }
    const fn =
      ts.isFunctionDeclaration(node) && node.parent === sf
        ? node
        : ts.isVariableDeclaration(node) &&
            node.parent.parent.parent === sf &&
            node.initializer &&
            (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))
          ? node.initializer
          : null;
    const first = fn?.parameters[0]?.type?.getText(sf);
    if (first !== undefined) {
      if (/^(Deps|Pick<Deps, .*>)$/.test(first)) useCases++;
      if (BARE_DEPENDENCY.test(first) && !firstParameterAllowed(file))
        (bareDependencies.get(file) ?? bareDependencies.set(file, []).get(file)).push(
          `${(node.name ?? fn.name)?.getText(sf) ?? "?"}:${lineOf(node)}`,
        );
    }
    if (ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.getText(sf) === "const")) casts++;
    if (isRouter(file) && ts.isPropertyAccessExpression(node) && node.name.text === "DB" && /\benv$/.test(node.expression.getText(sf)))
      add(routerHits, node);
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

const failures = [];
for (const [file, lines] of routerHits) {
  if (!(file in ROUTERS_ON_THE_BINDING))
    failures.push(`${file}: a router names env.DB (lines ${lines.join(", ")}); call a service instead`);
}
for (const [file, lines] of rawSites) {
  if (!(file in RAW_SQL))
    failures.push(
      `${file}: raw SQL on D1 outside the allow-list (lines ${lines.join(", ")}); use the area's Drizzle repository, or allow-list the file with its reason`,
    );
}
for (const file of Object.keys(ROUTERS_ON_THE_BINDING))
  if (!routerHits.has(file)) failures.push(`${file} no longer names env.DB: remove it from ROUTERS_ON_THE_BINDING`);
for (const [file, [allowed]] of Object.entries(RAW_SQL)) {
  const found = rawSites.get(file)?.length ?? 0;
  if (found === 0) failures.push(`${file} no longer runs raw SQL: remove it from RAW_SQL`);
  else if (found > allowed)
    failures.push(`${file}: ${found} raw SQL call sites, ${allowed} allowed (lines ${rawSites.get(file).join(", ")}); use Drizzle`);
  else if (found < allowed)
    failures.push(`${file}: ${found} raw SQL call sites now, ${allowed} allowed: lower its count in RAW_SQL to ${found}`);
}
for (const [file, names] of bareDependencies)
  failures.push(`${file}: ${names.join(", ")} take Env/Database/D1Database first; take one \`Deps\` (src/http/deps.ts) instead`);
if (casts > MAX_CASTS) failures.push(`${casts} \`as\` casts in src/, at most ${MAX_CASTS}: type the rows instead of casting them`);
else if (casts < MAX_CASTS) failures.push(`${casts} \`as\` casts in src/ now: lower MAX_CASTS to ${casts}`);
if (batchAny > MAX_BATCH_ANY) failures.push(`${batchAny} batch<any> in src/, at most ${MAX_BATCH_ANY}: batch typed Drizzle queries`);

const sites = [...rawSites.values()].reduce((n, l) => n + l.length, 0);
if (report) {
  const v1 = (readFileSync(path.join(root, "src/app.ts"), "utf8").match(/app\.route\("\/v1"/g) ?? []).length;
  console.log(`raw SQL on D1: ${sites} call sites in ${rawSites.size} files`);
  for (const [file, lines] of [...rawSites].sort((a, b) => b[1].length - a[1].length))
    console.log(`  ${String(lines.length).padStart(3)}  ${file}`);
  console.log(`routers naming env.DB: ${routerHits.size}`);
  console.log(
    `top-level functions taking Deps first: ${useCases}; taking Env/Database/D1Database first outside the layers: ${[...bareDependencies.values()].flat().length}`,
  );
  console.log(`\`as\` casts (not \`as const\`): ${casts}; batch<any>: ${batchAny}; routers mounted at /v1: ${v1}`);
  console.log("largest files:");
  for (const [n, f] of sizes.sort((a, b) => b[0] - a[0]).slice(0, 10)) console.log(`  ${String(n).padStart(5)}  ${f}`);
}
if (failures.length) {
  console.error(`check-data-access: ${failures.length} problem(s)\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
console.log(
  `check-data-access: ok (${routerHits.size} routers on the binding, ${sites} raw SQL call sites in ${rawSites.size} allow-listed files, ${casts} casts, ${batchAny} batch<any>)`,
);

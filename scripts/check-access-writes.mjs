// Every write that can take access away reaches the user's object first (issue 43,
// docs/hot-path.md "The caller's object"): the user's RateLimiter object holds their sessions,
// memberships and user row for the hot path, and only `changingAccess`
// (src/http/credentials/access-changes.ts) tells it of a change before the change is answered.
//
// This check reads src/ with TypeScript and finds every Drizzle write to `sessions`, `members`,
// `users` (update, delete) and `organizations` (delete: members go by cascade), every call of
// `membershipStatement` (the one builder of member writes), and every raw SQL text writing those
// tables. Each must sit inside a `changingAccess(…)` call, or be one of the exemptions below,
// each with its reason. A new write path that forgets the object fails here.
// Usage: node scripts/check-access-writes.mjs
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));

/** Writes that cannot take access away: [file, enclosing function, why]. */
const EXEMPT = [
  ["src/http/credentials/sessions.ts", "createSession", "a new session: the object loads a session it does not hold from D1"],
  ["src/http/credentials/sessions.ts", "writeSlide", "the idle expiry only ever moves forward; the object slides its own copy"],
  ["src/identity/members.ts", "membershipStatement", "the builder: each of its callers is checked"],
  ["src/test-mode/twin.ts", "*", "a test-mode twin has no members (no membershipStatement for a twin); its rows go with it"],
];

/** Writes that never take access away, whoever runs them (a new account: no object holds anything of it yet). */
const HARMLESS = new Set(["insert:organizations", "update:organizations", "insert:users"]);

const TABLES = new Set(["sessions", "members", "users", "organizations"]);
const RAW_WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(sessions|members|users|organizations)\b/i;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return full.endsWith(".ts") && !full.endsWith(".d.ts") ? [full] : [];
  });
}

function enclosingFunction(node) {
  for (let n = node.parent; n; n = n.parent) {
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name) return n.name.text;
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && ts.isVariableDeclaration(n.parent) && ts.isIdentifier(n.parent.name))
      return n.parent.name.text;
  }
  return null;
}

function insideChangingAccess(node) {
  for (let n = node.parent; n; n = n.parent) {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "changingAccess") return true;
  }
  return false;
}

const failures = [];
let writes = 0;
for (const file of files(path.join(root, "src"))) {
  const rel = path.relative(root, file);
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const judge = (node, what) => {
    writes += 1;
    if (insideChangingAccess(node)) return;
    const fn = enclosingFunction(node);
    if (EXEMPT.some(([f, name]) => f === rel && (name === "*" || name === fn))) return;
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    failures.push(`${rel}:${line + 1} ${what} (in ${fn ?? "top level"}) is not inside changingAccess(…)`);
  };
  const visit = (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isPropertyAccessExpression(callee) && ["insert", "update", "delete"].includes(callee.name.text)) {
        const [arg] = node.arguments;
        if (arg && ts.isIdentifier(arg) && TABLES.has(arg.text) && !HARMLESS.has(`${callee.name.text}:${arg.text}`)) {
          judge(node, `${callee.name.text}(${arg.text})`);
        }
      }
      if (ts.isIdentifier(callee) && callee.text === "membershipStatement") judge(node, "membershipStatement(…)");
    }
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) && RAW_WRITE.test(node.text)) {
      judge(node, `raw SQL "${node.text.slice(0, 40)}…"`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

if (failures.length > 0) {
  console.error(`Writes that can take access away must tell the user's object first (changingAccess):\n${failures.join("\n")}`);
  process.exit(1);
}
console.log(`check-access-writes: ${writes} writes to sessions, members, users and organizations, each inside changingAccess or exempt`);

import type { Hono } from "hono";

// A request whose path exists under another method answers 405 with `Allow` (RFC 9110 §15.5.6)
// rather than 404, so an integrator sees at once that the route is right and the verb is not.
// The table is built once per isolate from the app's own routes, on the first miss.

type Matcher = { pattern: RegExp; methods: Set<string> };

function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`);
}

export function methodTable(app: Hono<any>): (path: string) => string[] {
  let table: Matcher[] | null = null;
  return (path) => {
    if (table === null) {
      const byPath = new Map<string, Set<string>>();
      for (const route of app.routes) {
        // Middleware is registered as ALL; only real handlers say which methods a path takes.
        if (route.method === "ALL" || route.path.includes("*")) continue;
        const methods = byPath.get(route.path) ?? new Set<string>();
        methods.add(route.method);
        byPath.set(route.path, methods);
      }
      table = [...byPath].map(([p, methods]) => ({ pattern: patternOf(p), methods }));
    }
    const allowed = new Set<string>();
    for (const { pattern, methods } of table) if (pattern.test(path)) for (const m of methods) allowed.add(m);
    return [...allowed].sort();
  };
}

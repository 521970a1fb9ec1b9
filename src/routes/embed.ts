import { createRoute, z } from "@hono/zod-openapi";
import { errors, SECURITY } from "../http/openapi";
import { router } from "../http/router";
import { BOARD_PAGE_CSP, boardPage } from "../widget/board-page";
// Imported as text (wrangler.toml [[rules]]): the file is served byte for byte, never bundled.
import embedSource from "../widget/embed.js";

const app = router();
const tags = ["Widget"];

const SCRIPT_HEADERS = {
  "Content-Type": "text/javascript; charset=utf-8",
  "Access-Control-Allow-Origin": "*",
  "Cache-Control": "public, max-age=300",
  "X-Content-Type-Options": "nosniff",
};

const embed = createRoute({
  method: "get",
  path: "/embed.js",
  tags,
  summary: "The embeddable widget script",
  description:
    "Public. Load it on any site with an async script element whose src is `…/v1/embed.js`: it renders the widget into `#widget` " +
    "(status, join or display board) from `window.QueueWidgetConfig` or the element's data-* attributes. " +
    "Plain JavaScript without dependencies; cached for 5 minutes; CORS open to any origin.",
  security: SECURITY.none,
  responses: {
    200: { description: "The widget script", content: { "text/javascript": { schema: z.string() } } },
    ...errors(),
  },
});

app.openapi(embed, (c) => c.body(embedSource, 200, SCRIPT_HEADERS));

// Ids and keys are opaque tokens of these characters; refusing anything else keeps the page inert.
const Token = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '_' and '-' only");

const board = createRoute({
  method: "get",
  path: "/widget/board",
  tags,
  summary: "Full-screen display board page for waiting-room screens",
  description:
    "Public HTML page built on embed.js (type board): the codes being called with their counter or operator, the next codes, " +
    "and a short chime when a code is called. The page itself needs no credential; it calls the display-board route with " +
    "`key`, so use a key with the `widget` permission. Live over the widget WebSocket, polling every 30 s when disconnected.",
  security: SECURITY.none,
  request: {
    query: z.object({
      organization: Token(64).openapi({ description: "The organization id", example: "org_0123456789abcdefghjk" }),
      key: Token(128).openapi({ description: "An API key of the organization, preferably with the `widget` permission only" }),
      queues: z
        .string()
        .max(1000)
        .regex(/^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$/, "comma-separated queue ids")
        .optional()
        .openapi({ description: "Comma-separated queue ids to show; default every queue of the board" }),
      language: z.enum(["fr", "en"]).default("en").openapi({ description: "fr or en, default en" }),
      theme: z.enum(["light", "dark"]).default("dark").openapi({ description: "light or dark, default dark (screens)" }),
      color: z
        .string()
        .regex(/^[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/, "a hex colour without '#', e.g. 2563eb")
        .optional()
        .openapi({ description: "Primary colour as hex without '#', e.g. 2563eb" }),
      sound: z.enum(["0", "1"]).default("1").openapi({ description: "1 (default) to chime when a code is called, 0 for silence" }),
    }),
  },
  responses: {
    200: { description: "The display board page", content: { "text/html": { schema: z.string() } } },
    ...errors(),
  },
});

app.openapi(board, (c) => {
  const q = c.req.valid("query");
  const page = boardPage({
    organizationId: q.organization,
    apiKey: q.key,
    queues: q.queues?.split(","),
    language: q.language,
    theme: q.theme,
    primaryColor: q.color ? `#${q.color}` : undefined,
    sound: q.sound === "1",
  });
  // The key is in the URL: keep the page out of caches and referrers.
  return c.body(page, 200, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": BOARD_PAGE_CSP,
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
  });
});

export default app;

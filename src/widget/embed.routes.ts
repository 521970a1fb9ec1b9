import { createRoute, z } from "@hono/zod-openapi";
import { errors, SECURITY } from "../http/openapi";
import { router } from "../http/router";
import { CATALOGUES, isLanguage, LANGUAGES, type Language } from "../domain/languages";
import { BOARD_PAGE_CSP, boardPage } from "./board-page";
// Imported as text (wrangler.toml [[rules]]): served as it is, never bundled. embed.min.js is
// embed.js minified by scripts/build-embed.mjs (on install, before dev, tests and deploy).
import embedSource from "./embed.min.js";
import boardSource from "./board.js";

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

/** Where the served script receives the catalogue's words, locales and names (src/widget/embed.js, MORE). */
const CATALOGUE_SLOT = "QW_CATALOGUE";

/** The intake words under embed.js's names (`qRequired`…): the join form's refusals of an answer. */
function intakeWords(language: Language): Record<string, string> {
  const w = CATALOGUES[language].intake;
  return {
    qOptional: w.optional,
    qRequired: w.required,
    qConsent: w.consent,
    qText: w.text,
    qNumber: w.number,
    qSelect: w.select,
    qDate: w.date,
    qPhone: w.phone,
    qEmail: w.email,
  };
}

/**
 * The words of the languages the script does not hold itself (beyond en and fr: the catalogue's
 * `widget` and `intake` sections), and every language's locale and own name.
 */
export function embedCatalogue(): {
  words: Record<string, Record<string, string>>;
  locales: Record<string, string>;
  names: Record<string, string>;
} {
  const beyond = LANGUAGES.filter((l) => l !== "en" && l !== "fr");
  return {
    words: Object.fromEntries(beyond.map((l) => [l, { ...CATALOGUES[l].widget, ...intakeWords(l) }])),
    locales: Object.fromEntries(LANGUAGES.map((l) => [l, CATALOGUES[l].meta.locale])),
    names: Object.fromEntries(LANGUAGES.map((l) => [l, CATALOGUES[l].meta.name])),
  };
}

/**
 * The script as served: embed.js minified at build time (scripts/build-embed.mjs: no comments,
 * short names), with the catalogue's words for every other language in its slot.
 */
export function serveEmbed(minified: string): string {
  if (minified.split(CATALOGUE_SLOT).length !== 2) throw new Error("embed.js lost its catalogue slot");
  return minified.replace(CATALOGUE_SLOT, () => JSON.stringify(embedCatalogue()));
}
const servedEmbed = serveEmbed(embedSource);

app.openapi(embed, (c) => c.body(servedEmbed, 200, SCRIPT_HEADERS));

const boardScript = createRoute({
  method: "get",
  path: "/board.js",
  tags,
  summary: "The display board's part of the widget script",
  description:
    "Public. embed.js loads it by itself for a widget of type board (the board page loads it first), so pages with a status or " +
    "join widget never download it. Cached for 5 minutes; CORS open to any origin.",
  security: SECURITY.none,
  responses: {
    200: { description: "The display board script", content: { "text/javascript": { schema: z.string() } } },
    ...errors(),
  },
});

app.openapi(boardScript, (c) => c.body(boardSource, 200, SCRIPT_HEADERS));

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
    "Public HTML page built on embed.js (type board): the organization's name and logo (and with `location` the branch's name: " +
    "a board per branch shows only that branch's queues), a clock in the location's time zone, " +
    "per queue the waiting count, the estimated wait, the codes called in the last `callMinutes` with their counter, and the next " +
    "codes; a short chime when a code is called. The page itself needs no credential; it loads the display-board route once with " +
    "`key` (use a key with the `widget` permission), then lives on the WebSocket's board_update (polling every 30 s only while " +
    "disconnected). Legible at 3 m on a 1080p screen, landscape or portrait. See docs/display-board.md.",
  security: SECURITY.none,
  request: {
    query: z.object({
      organization: Token(64).openapi({ description: "The organization id", example: "org_0123456789abcdefghjk" }),
      location: Token(64).optional().openapi({
        description:
          "A location id: the board of that branch (its queues only, its name on screen, its clock and open desks). One TV per branch uses it",
        example: "loc_d3m0par1s00000000000",
      }),
      key: Token(128).openapi({ description: "An API key of the organization, preferably with the `widget` permission only" }),
      queues: z
        .string()
        .max(1000)
        .regex(/^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$/, "comma-separated queue ids")
        .optional()
        .openapi({ description: "Comma-separated queue ids to show; default every queue of the board" }),
      language: z
        .enum(LANGUAGES)
        .default("en")
        .openapi({ description: `The board's words and voice: ${LANGUAGES.join(", ")}; default en (ar lays the board out right to left)` }),
      theme: z.enum(["light", "dark"]).default("dark").openapi({ description: "light or dark, default dark (screens)" }),
      color: z
        .string()
        .regex(/^[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/, "a hex colour without '#', e.g. 2563eb")
        .optional()
        .openapi({ description: "Primary colour as hex without '#', e.g. 2563eb" }),
      sound: z.enum(["0", "1"]).default("1").openapi({ description: "1 (default) to chime when a code is called, 0 for silence" }),
      kiosk: z
        .enum(["0", "1"])
        .default("0")
        .openapi({
          description:
            "1 for an unattended screen: no 'enable sound' button, no cursor, the screen kept awake. Start the kiosk's Chromium with " +
            "`--autoplay-policy=no-user-gesture-required` so the chime plays without a touch (without it the board stays silent, and still flashes)",
        }),
      callMinutes: z
        .string()
        .regex(/^([1-9]|[1-5][0-9]|60)$/, "whole minutes from 1 to 60")
        .default("5")
        .openapi({ description: "Minutes a called code stays on screen, 1 to 60, default 5" }),
      voice: z
        .enum(["0", "1"])
        .default("1")
        .openapi({ description: "1 (default) to say each call aloud after the chime, in the board's language; 0 keeps the chime only" }),
      layout: z
        .enum(["queues", "desks"])
        .default("queues")
        .openapi({ description: "queues (default): a section per queue; desks: one column per desk with its latest call" }),
      voices: z
        .string()
        .max(40)
        .regex(/^[a-z]{2}(,[a-z]{2}){0,2}$/, "up to three comma-separated language codes, e.g. fr,en,ar")
        .refine((v) => v.split(",").every((code) => isLanguage(code)), `each one of ${LANGUAGES.join(", ")}`)
        .refine((v) => new Set(v.split(",")).size === v.split(",").length, "each language once")
        .optional()
        .openapi({
          description:
            "The languages each call is said in, in order, up to three (e.g. `fr,en,ar`): one chime, then one announcement per language " +
            "with the browser's voice for it. Default: the board's `language`. A language this screen has no voice for is named on the board",
          example: "fr,en,ar",
        }),
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
    locationId: q.location,
    apiKey: q.key,
    queues: q.queues?.split(","),
    language: q.language,
    theme: q.theme,
    primaryColor: q.color ? `#${q.color}` : undefined,
    sound: q.sound === "1",
    kiosk: q.kiosk === "1",
    callMinutes: Number(q.callMinutes),
    voice: q.voice === "1",
    layout: q.layout,
    voices: q.voices ? (q.voices.split(",") as Language[]) : [q.language],
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

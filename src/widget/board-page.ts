import { CATALOGUES, type Language } from "../domain/languages";

/** What the display-board page shows; every value is already validated by the route. */
export interface BoardPageOptions {
  organizationId: string;
  /** One branch's board: its queues, name, clock and open desks. */
  locationId?: string;
  apiKey: string;
  queues?: string[];
  language: Language;
  theme: "light" | "dark";
  primaryColor?: string;
  sound: boolean;
  /** Unattended screen: no sound button, no cursor, screen kept awake (docs/display-board.md). */
  kiosk: boolean;
  /** Minutes a call stays on screen. */
  callMinutes: number;
  /** Calls said aloud after the chime (speech synthesis); false keeps the chime only. */
  voice: boolean;
  /** "desks": one column per desk with its latest call; "queues": one section per queue. */
  layout: "queues" | "desks";
  /** The languages each call is said in, in order (up to three; the chime sounds once). */
  voices: Language[];
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);

/**
 * The full-screen call screen for waiting rooms. It is embed.js with type "board": the whole
 * configuration travels in data-* attributes, so the page has no inline script and a strict CSP.
 */
export function boardPage(o: BoardPageOptions): string {
  const attrs: Record<string, string | undefined> = {
    "data-type": "board",
    "data-organization": o.organizationId,
    "data-location": o.locationId,
    "data-api-key": o.apiKey,
    "data-queues": o.queues?.join(","),
    "data-language": o.language,
    // The board's words and voice from the catalogue: board.js and embed.js speak any language of it.
    "data-strings": JSON.stringify(CATALOGUES[o.language].pages.board),
    "data-locale": CATALOGUES[o.language].meta.locale,
    "data-dir": CATALOGUES[o.language].meta.dir,
    "data-theme": o.theme,
    "data-primary-color": o.primaryColor,
    "data-sound": String(o.sound),
    "data-kiosk": String(o.kiosk),
    "data-call-minutes": String(o.callMinutes),
    "data-voice": String(o.voice),
    "data-layout": o.layout,
    // Each voice's words and locale: board.js says a call once per voice, in this order.
    "data-voices": JSON.stringify(
      o.voices.map((code) => {
        const { meta, pages } = CATALOGUES[code];
        return { language: code, name: meta.name, locale: meta.locale, say: pages.board.say, sayCode: pages.board.sayCode };
      }),
    ),
  };
  const attributes = Object.entries(attrs)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}="${escapeHtml(value)}"`)
    .join(" ");
  const background = o.theme === "dark" ? "#111827" : "#fff";
  return `<!doctype html>
<html lang="${o.language}" dir="${CATALOGUES[o.language].meta.dir}">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="robots" content="noindex" />
    <title>${escapeHtml(CATALOGUES[o.language].pages.board.title)}</title>
    <style>html,body{margin:0;height:100%;background:${background}}#widget{min-height:100vh}${o.kiosk ? "html{cursor:none}" : ""}</style>
  </head>
  <body>
    <div id="widget" ${attributes}></div>
    <script src="/v1/board.js"></script>
    <script src="/v1/embed.js"></script>
  </body>
</html>`;
}

/** Inline style for the page background only; scripts and connections stay on this origin. */
export const BOARD_PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' https: data:; base-uri 'none'; frame-ancestors *";

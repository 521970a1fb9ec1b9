// A ticket's printed receipt (docs/receipts.md): the ESC/POS bytes an 80 mm thermal printer
// takes, and the same receipt as an HTML page for the browser's print dialog. Pure: the
// content comes in already looked up and formatted.

import { canDraw, drawText, type Bitmap } from "../lib/raster-text";
import { CATALOGUES, type Language } from "./languages";

export type ReceiptLanguage = Language;

export interface ReceiptContent {
  displayCode: string;
  organizationName: string;
  serviceName: string;
  locationName: string | null;
  /** When the ticket was taken, already written in the location's time zone. */
  issuedAt: string;
  /** The visitor's status page with its token; null when the caller could not give the token. */
  statusUrl: string | null;
  language: ReceiptLanguage;
}

export function receiptLabels(language: ReceiptLanguage) {
  return CATALOGUES[language].receipt;
}

/** The wall-clock time a ticket was taken, in the location's zone, as the receipt prints it. */
export function receiptTime(at: number, timeZone: string, language: ReceiptLanguage): string {
  const locale = CATALOGUES[language].meta.locale;
  let text: string;
  try {
    text = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone }).format(new Date(at));
  } catch {
    text = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(new Date(at));
  }
  // Narrow and no-break spaces (fr-FR) print as garbage on most thermal printers, and so do the
  // bidi marks and comma of Arabic dates (ar-MA writes "28\u200f/11\u200f/2026\u060c 17:53").
  return text
    .replace(/[\u202f\u00a0]/g, " ")
    .replace(/[\u200e\u200f\u061c]/g, "")
    .replace(/\u060c/g, ",");
}

// ---- ESC/POS ---------------------------------------------------------------------------

const ESC = 0x1b;
const GS = 0x1d;
const LF = 0x0a;
/** Code page WPC1252 (ESC t 16): the Latin letters of French, as on Epson TM printers and their clones. */
const CODE_PAGE_WPC1252 = 16;
const CP1252_EXTRA: Record<string, number> = {
  "€": 0x80,
  "…": 0x85,
  Œ: 0x8c,
  "‘": 0x91,
  "’": 0x92,
  "“": 0x93,
  "”": 0x94,
  "–": 0x96,
  "—": 0x97,
  œ: 0x9c,
};

/** Text in WPC1252: Latin-1 as is, a few typographic signs mapped, anything else by its base letter or "?". */
export function cp1252(text: string): number[] {
  const out: number[] = [];
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code === 0x0a || (code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code <= 0xff)) out.push(code);
    else if (CP1252_EXTRA[ch] !== undefined) out.push(CP1252_EXTRA[ch]);
    else {
      const base = ch.normalize("NFD").charAt(0);
      const b = base.codePointAt(0) ?? 0x3f;
      out.push(b >= 0x20 && b < 0x7f ? b : 0x3f);
    }
  }
  return out;
}

const inCodePage = (text: string) => !cp1252(text.replaceAll("?", "")).includes(0x3f);

/** The dots an 80 mm printer's head prints across (72 mm at 203 dpi, 8 dots a millimetre). */
export const RECEIPT_PRINT_DOTS = 576;

/** `GS v 0`: a raster bit image, normal size, `width / 8` bytes a row. */
function rasterImage(image: Bitmap): number[] {
  const x = image.width / 8;
  const out = [GS, 0x76, 0x30, 0, x & 0xff, x >> 8, image.height & 0xff, image.height >> 8];
  for (const byte of image.data) out.push(byte);
  return out;
}

/** `GS ( k` function: pL pH cn fn data (cn 49 = QR Code). */
function qrFunction(fn: number, data: number[]): number[] {
  const length = data.length + 2;
  return [GS, 0x28, 0x6b, length & 0xff, length >> 8, 49, fn, ...data];
}

/**
 * The receipt as ESC/POS commands: initialise, centred code in double size, service, place, time, QR, cut.
 * A line WPC1252 has no letters for (Arabic: the labels of an Arabic ticket, or a queue, service or
 * place named in Arabic) prints as raster images (`GS v 0`), its letters joined and right to left,
 * one image a line of print, as FQM does; the code and the time stay text (Latin letters and digits).
 */
export function escposReceipt(r: ReceiptContent): Uint8Array {
  const own = receiptLabels(r.language);
  // A script neither the code page nor the receipt's font has (none in the catalogue today) would come out as "?": English then.
  const l = Object.values(own).every((text) => inCodePage(text) || canDraw(text)) ? own : receiptLabels("en");
  const bytes: number[] = [];
  const line = (text: string, bold = false) => {
    if (inCodePage(text) || !canDraw(text)) bytes.push(...cp1252(text), LF);
    else for (const image of drawText(text, { width: RECEIPT_PRINT_DOTS, bold })) bytes.push(...rasterImage(image));
  };
  bytes.push(ESC, 0x40); // initialise
  bytes.push(ESC, 0x74, CODE_PAGE_WPC1252);
  bytes.push(ESC, 0x61, 1); // centre
  bytes.push(ESC, 0x45, 1); // bold
  line(r.organizationName, true);
  bytes.push(ESC, 0x45, 0);
  line(l.ticket);
  bytes.push(GS, 0x21, 0x11); // double width and height
  line(r.displayCode);
  bytes.push(GS, 0x21, 0x00);
  bytes.push(LF);
  line(r.serviceName);
  if (r.locationName) line(r.locationName);
  line(r.issuedAt);
  if (r.statusUrl) {
    bytes.push(LF);
    line(l.follow);
    const data = [...new TextEncoder().encode(r.statusUrl)];
    bytes.push(...qrFunction(65, [50, 0])); // model 2
    bytes.push(...qrFunction(67, [6])); // module size 6 dots (~5 mm per 8 modules at 203 dpi)
    bytes.push(...qrFunction(69, [49])); // error correction M
    bytes.push(...qrFunction(80, [48, ...data])); // store the data
    bytes.push(...qrFunction(81, [48])); // print the symbol
    bytes.push(LF);
  }
  line(l.keep);
  bytes.push(ESC, 0x64, 4); // feed 4 lines past the cutter
  bytes.push(GS, 0x56, 66, 0); // partial cut
  return new Uint8Array(bytes);
}

// ---- HTML ------------------------------------------------------------------------------

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);

/** Paper 80 mm wide; thermal heads print 72 mm of it. */
export const RECEIPT_PAPER_MM = 80;
export const RECEIPT_PRINT_MM = 72;

/** The receipt as a page that prints on 80 mm paper (print stylesheet), the QR as inline SVG. */
export function htmlReceipt(r: ReceiptContent, qrSvg: string | null): string {
  const l = receiptLabels(r.language);
  const e = escapeHtml;
  return `<!doctype html>
<html lang="${r.language}" dir="${CATALOGUES[r.language].meta.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(l.ticket)} ${e(r.displayCode)}</title>
<style>
@page{size:${RECEIPT_PAPER_MM}mm auto;margin:0}
*{box-sizing:border-box}
html,body{margin:0;background:#fff;color:#000}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.receipt{width:${RECEIPT_PRINT_MM}mm;margin:0 auto;padding:4mm 2mm 6mm;text-align:center;font-size:3.6mm;line-height:1.3;overflow-wrap:anywhere}
.org{font-weight:700;font-size:4.2mm;margin:0}
.lbl{margin:3mm 0 0}
.code{font-size:16mm;font-weight:800;line-height:1.05;margin:1mm 0 3mm;font-variant-numeric:tabular-nums}
.svc{font-weight:700;font-size:4.6mm;margin:0}
.meta{margin:1mm 0 0}
.qr{display:block;width:40mm;height:40mm;margin:2mm auto 0}.qr svg{display:block;width:100%;height:100%}
.follow{margin:4mm 0 0}
.keep{margin:4mm 0 0;font-size:3.2mm}
@media screen{body{background:#e5e7eb;padding:6mm 0}.receipt{background:#fff;box-shadow:0 1mm 3mm rgba(0,0,0,.2)}}
</style>
</head>
<body>
<main class="receipt">
<p class="org">${e(r.organizationName)}</p>
<p class="lbl">${e(l.ticket)}</p>
<p class="code" data-code>${e(r.displayCode)}</p>
<p class="svc">${e(r.serviceName)}</p>
${r.locationName ? `<p class="meta">${e(r.locationName)}</p>\n` : ""}<p class="meta"><time>${e(r.issuedAt)}</time></p>
${qrSvg ? `<p class="follow">${e(l.follow)}</p>\n<div class="qr" role="img" aria-label="${e(l.follow)}">${qrSvg}</div>\n` : ""}<p class="keep">${e(l.keep)}</p>
</main>
</body>
</html>`;
}

/** Inline styles only; the QR is inline SVG; nothing is fetched. */
export const RECEIPT_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'self'";

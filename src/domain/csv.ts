import { wallTimeAt } from "./recurrence";

// CSV as RFC 4180 writes it, for spreadsheet apps (docs/retention.md, "CSV export"):
//  - fields separated by commas, records by CRLF;
//  - a field holding a comma, a double quote, CR or LF is enclosed in double quotes, its
//    quotes doubled;
//  - formula injection: a text field starting with = + - @ (or a tab or CR, which some apps
//    strip before reading a formula) is prefixed with a single quote, so Excel, LibreOffice
//    and Google Sheets show it as text instead of running it (OWASP's advice). Numbers and
//    ISO times are written by us and never start with those (negative numbers are not emitted);
//  - the same inside a field, after any character a spreadsheet may split on (`,` `;` tab `|`,
//    CR, LF), even through the quotes: French and German Excel split a comma file on `;`
//    without honouring quotes that open mid-line, so `Jean;=cmd|…` would start a cell with `=`
//    (issue 26). Each such place gets the single quote, and a field holding `;` or a
//    neutralised place is quoted too;
//  - the file starts with a UTF-8 byte order mark, so Excel reads it as UTF-8.

export const UTF8_BOM = "\uFEFF";
export const CSV_EOL = "\r\n";

/** A place a spreadsheet may start a cell (the field's start or after a delimiter), then a formula's first character. */
const FORMULA_AFTER_SPLIT = /(^|[,;|\t\r\n])([ ]*)(?=[=+\-@\t\r])/g;
const NEEDS_QUOTES = /[",;\t\r\n]/;

export type CsvValue = string | number | boolean | null | undefined;

/** One field: empty for null/undefined, neutralised if it could be read as a formula, quoted if needed. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value === "boolean") return value ? "true" : "false";
  const text = value.replace(FORMULA_AFTER_SPLIT, "$1'$2");
  const neutralisedInside = text.length > value.length && !(text.startsWith("'") && text.length === value.length + 1);
  return NEEDS_QUOTES.test(text) || neutralisedInside ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRecord(values: readonly CsvValue[]): string {
  return values.map(csvField).join(",") + CSV_EOL;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** "2026-03-29T03:05:00.000+02:00": the instant as read in `timeZone`, with that zone's offset then. */
export function isoInZone(utcMs: number, timeZone: string): string {
  const w = wallTimeAt(utcMs, timeZone);
  const local = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);
  const minutes = Math.round((local - utcMs) / 60_000);
  const sign = minutes < 0 ? "-" : "+";
  const offset = `${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}.${pad(w.millisecond, 3)}${offset}`;
}

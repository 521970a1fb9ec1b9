// CONTRACT §10: free text shown to the public (names, visitor names, descriptions, titles) refuses
// control characters, bidi overrides and lone surrogates. A right-to-left override turns
// "abc\u202Egnp.exe" into "abcexe.png" on a board; a NUL or a C1 control cuts the text short in
// printers and screen readers; a lone surrogate is not text at all and breaks UTF-8 encoders.
// Marks that real writing needs stay allowed: the left-to-right and right-to-left marks and the
// Arabic letter mark (U+200E, U+200F, U+061C), the zero-width joiners of emoji and Indic scripts.

/** C0 and C1 controls and DEL, except tab, line feed and carriage return. */
const CONTROL_IN_PARAGRAPH = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
/** C0 and C1 controls and DEL, tab and line breaks included: a name is one line. */
const CONTROL_IN_LINE = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;
/** Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const PUBLIC_LINE_RULE = "must be one line of text without control characters, bidi overrides or lone surrogates";
export const PUBLIC_PARAGRAPH_RULE =
  "must be text without control characters (other than line breaks and tabs), bidi overrides or lone surrogates";

/** A name or title: one line of printable text. */
export function isPublicLine(text: string): boolean {
  return !CONTROL_IN_LINE.test(text) && !BIDI_CONTROL.test(text) && !LONE_SURROGATE.test(text);
}

/** A description or note: like a line, and line breaks and tabs are allowed. */
export function isPublicParagraph(text: string): boolean {
  return !CONTROL_IN_PARAGRAPH.test(text) && !BIDI_CONTROL.test(text) && !LONE_SURROGATE.test(text);
}

const UNSAFE_IN_PARAGRAPH = new RegExp(`${CONTROL_IN_PARAGRAPH.source}|${BIDI_CONTROL.source}|${LONE_SURROGATE.source}`, "g");

/**
 * A text we cannot refuse (a customer's SMS) made safe to keep and show: what §10 refuses
 * elsewhere is dropped, and it is cut at `max` characters (never inside a surrogate pair).
 */
export function safeParagraph(text: string, max: number): string {
  const clean = text.replace(UNSAFE_IN_PARAGRAPH, "");
  if (clean.length <= max) return clean;
  const cut = /[\uD800-\uDBFF]/.test(clean[max - 1] ?? "") ? max - 1 : max;
  return clean.slice(0, cut);
}

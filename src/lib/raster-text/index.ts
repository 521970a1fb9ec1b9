// Text drawn as one-bit images, for printers whose code page has no letters for it (an Arabic
// receipt, docs/receipts.md). Pure and dependency-free, so it runs in the Worker: the letters take
// their joined forms (./arabic-shaping.ts), the line is ordered right to left with digits and Latin
// words kept left to right (./bidi.ts), and each character is drawn from a bitmap font rendered
// once from DejaVu Sans (./font.generated.ts, scripts/build-receipt-font.mjs).
import { shapeArabic, type Cluster } from "./arabic-shaping";
import { bidiClass, bidiLevels, mirrored, paragraphLevel, visualOrder } from "./bidi";
import { FONT_ASCENT, FONT_DESCENT, FONT_GLYPHS } from "./font.generated";

export { shapeArabic } from "./arabic-shaping";
export { bidiClass, bidiLevels, mirrored, paragraphLevel, visualOrder } from "./bidi";

/** One bit a pixel, `width` a multiple of 8: rows of width / 8 bytes, the leftmost pixel in the high bit (ESC/POS raster order). */
export interface Bitmap {
  width: number;
  height: number;
  data: Uint8Array;
}

interface Glyph {
  advance: number;
  left: number;
  top: number;
  width: number;
  height: number;
  offset: number;
}

/** One line of text: the font's height and a dot above and below. */
export const LINE_HEIGHT = FONT_ASCENT + FONT_DESCENT + 2;
const BASELINE = 1 + FONT_ASCENT;

let glyphs: Map<number, Glyph> | null = null;
let bits = new Uint8Array(0);

/** The font, decoded on first use (about 50 KB of base64: a millisecond). */
function font(): Map<number, Glyph> {
  if (glyphs) return glyphs;
  const raw = atob(FONT_GLYPHS);
  bits = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bits[i] = raw.charCodeAt(i);
  glyphs = new Map();
  let at = 0;
  while (at < bits.length) {
    const signed = (b: number) => (b > 127 ? b - 256 : b);
    const cp = (bits[at]! << 8) | bits[at + 1]!;
    const glyph = {
      advance: bits[at + 2]!,
      left: signed(bits[at + 3]!),
      top: signed(bits[at + 4]!),
      width: bits[at + 5]!,
      height: bits[at + 6]!,
      offset: at + 7,
    };
    glyphs.set(cp, glyph);
    at = glyph.offset + Math.ceil(glyph.width / 8) * glyph.height;
  }
  return glyphs;
}

/** The glyph for a cluster: its joined form, else the letter itself. */
const glyphOf = (cp: number, source: number): Glyph | undefined => font().get(cp) ?? font().get(source);

/** Whether every character of the text can be drawn (the font has Latin, Arabic and their signs; not, say, Chinese). */
export function canDraw(text: string): boolean {
  return shapeArabic(text).every((c) => glyphOf(c.cp, c.source) !== undefined && c.marks.every((m) => font().has(m)));
}

const widthOf = (clusters: readonly Cluster[], bold: boolean) =>
  clusters.reduce((sum, c) => sum + (glyphOf(c.cp, c.source)?.advance ?? 0), 0) + (bold && clusters.length ? 1 : 0);
const isSpace = (c: Cluster) => c.source === 0x20;

/** Clusters cut into lines of at most `width` dots, at spaces when a word fits (logical order). */
function wrap(clusters: Cluster[], width: number, bold: boolean): Cluster[][] {
  const words: Cluster[][] = [];
  for (const c of clusters) {
    if (isSpace(c)) words.push([c]);
    else if (words.length === 0 || isSpace(words.at(-1)![0]!)) words.push([c]);
    else words.at(-1)!.push(c);
  }
  const lines: Cluster[][] = [[]];
  for (const word of words) {
    const current = lines.at(-1)!;
    if (widthOf([...current, ...word], bold) <= width) current.push(...word);
    else if (isSpace(word[0]!)) lines.push([]);
    else if (widthOf(word, bold) <= width) lines.push([...word]);
    else
      for (const c of word) {
        if (widthOf([...lines.at(-1)!, c], bold) > width) lines.push([]);
        lines.at(-1)!.push(c);
      }
  }
  return lines.map((line) => trimSpaces(line)).filter((line) => line.length > 0);
}

function trimSpaces(line: Cluster[]): Cluster[] {
  let [from, to] = [0, line.length];
  while (from < to && isSpace(line[from]!)) from++;
  while (to > from && isSpace(line[to - 1]!)) to--;
  return line.slice(from, to);
}

function blit(target: Bitmap, glyph: Glyph, x: number, y: number) {
  const stride = Math.ceil(glyph.width / 8);
  const rowBytes = target.width / 8;
  for (let r = 0; r < glyph.height; r++) {
    const ty = y + r;
    if (ty < 0 || ty >= target.height) continue;
    for (let c = 0; c < glyph.width; c++) {
      if (!(bits[glyph.offset + r * stride + (c >> 3)]! & (0x80 >> (c & 7)))) continue;
      const tx = x + c;
      if (tx < 0 || tx >= target.width) continue;
      target.data[ty * rowBytes + (tx >> 3)]! |= 0x80 >> (tx & 7);
    }
  }
}

/**
 * The text drawn in as many lines as it needs, each a bitmap `width` dots wide (a multiple of 8)
 * with the line centred on it: Arabic right to left with its letters joined, numbers and Latin
 * words left to right. `bold` draws each glyph twice, a dot apart.
 */
export function drawText(text: string, options: { width: number; bold?: boolean }): Bitmap[] {
  const { width, bold = false } = options;
  if (width % 8 !== 0) throw new Error("drawText: the width must be a multiple of 8 dots");
  const sources = [...text].map((ch) => ch.codePointAt(0)!);
  const paragraph = paragraphLevel(sources.map(bidiClass));
  return wrap(shapeArabic(text.replace(/\s+/g, " ")), width, bold).map((line) => {
    const bitmap: Bitmap = { width, height: LINE_HEIGHT, data: new Uint8Array((width / 8) * LINE_HEIGHT) };
    const levels = bidiLevels(
      line.map((c) => bidiClass(c.source)),
      paragraph,
    );
    let x = Math.floor((width - widthOf(line, bold)) / 2);
    for (const index of visualOrder(levels)) {
      const cluster = line[index]!;
      const glyph = font().get(mirrored(cluster.cp, levels[index]!)) ?? glyphOf(cluster.cp, cluster.source);
      if (!glyph) continue;
      for (const dx of bold ? [0, 1] : [0]) {
        blit(bitmap, glyph, x + glyph.left + dx, BASELINE - glyph.top);
        // A mark sits centred over (or under) its letter, where the font puts it in height.
        for (const mark of cluster.marks) {
          const m = font().get(mark);
          if (m) blit(bitmap, m, x + Math.floor((glyph.advance - m.width) / 2) + dx, BASELINE - m.top);
        }
      }
      x += glyph.advance;
    }
    return bitmap;
  });
}

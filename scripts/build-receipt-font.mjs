// Writes src/lib/raster-text/font.generated.ts: the bitmap font the Worker prints receipts' text
// with when the printer's code page has no letters for it (Arabic, docs/receipts.md). Run once by
// hand (`node scripts/build-receipt-font.mjs`); its output is committed, since the font it reads is
// on this machine, not on a user's or in the Worker.
//
// The font: DejaVu Sans (free licence, src/lib/raster-text/LICENSE-DejaVu.txt), at 26 pixels per em,
// for Latin, the Arabic letters, digits and marks, and the Arabic presentation forms (U+FB50–U+FDFF,
// U+FE70–U+FEFF: each letter's isolated, final, initial and medial shape), which the Worker picks by
// the letters' joining (src/lib/raster-text/arabic-shaping.ts). No font library: this reads the
// TrueType tables (cmap, glyf with composite glyphs, hmtx) and fills each outline with its own
// scanline rasterizer, 4×4 samples a pixel, one bit a pixel (thermal heads print dots, not greys).
// A joining glyph is stretched by under half a pixel so its advance is whole pixels: letters of a
// word then touch exactly, with no gap or overlap of the rounding.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const FONT_FILE = process.env.RECEIPT_FONT ?? "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const TARGET = path.join(root, "src", "lib", "raster-text", "font.generated.ts");
const PX = 26;
const SAMPLES = 4;
const THRESHOLD = 0.45;
const RANGES = [
  [0x20, 0x7e],
  [0xa0, 0xff],
  [0x152, 0x153],
  [0x2010, 0x2026],
  [0x20ac, 0x20ac],
  [0x2212, 0x2212],
  [0x0600, 0x06ff],
  [0xfb50, 0xfbff],
  [0xfe70, 0xfeff],
];

function parseFont(buf) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const tables = {};
  for (let i = 0; i < dv.getUint16(4); i++) {
    const o = 12 + 16 * i;
    tables[String.fromCharCode(...buf.subarray(o, o + 4))] = dv.getUint32(o + 8);
  }
  const unitsPerEm = dv.getUint16(tables.head + 18);
  const longLoca = dv.getInt16(tables.head + 50) === 1;
  const ascender = dv.getInt16(tables.hhea + 4);
  const descender = dv.getInt16(tables.hhea + 6);
  const numberOfHMetrics = dv.getUint16(tables.hhea + 34);
  const advance = (g) => dv.getUint16(tables.hmtx + 4 * Math.min(g, numberOfHMetrics - 1));
  const glyphAt = (g) => (longLoca ? dv.getUint32(tables.loca + 4 * g) : dv.getUint16(tables.loca + 2 * g) * 2);

  // cmap: the Windows Unicode BMP subtable (format 4).
  const cmap = new Map();
  let sub = null;
  for (let i = 0; i < dv.getUint16(tables.cmap + 2); i++) {
    const o = tables.cmap + 4 + 8 * i;
    if (dv.getUint16(o) === 3 && dv.getUint16(o + 2) === 1) sub = tables.cmap + dv.getUint32(o + 4);
  }
  if (sub === null || dv.getUint16(sub) !== 4) throw new Error("no cmap format 4 (3,1)");
  const segX2 = dv.getUint16(sub + 6);
  const ends = sub + 14;
  const starts = ends + segX2 + 2;
  const deltas = starts + segX2;
  const rangeOffsets = deltas + segX2;
  for (let s = 0; s < segX2 / 2; s++) {
    const start = dv.getUint16(starts + 2 * s);
    const end = dv.getUint16(ends + 2 * s);
    const delta = dv.getInt16(deltas + 2 * s);
    const rangeOffset = dv.getUint16(rangeOffsets + 2 * s);
    for (let c = start; c <= end && c !== 0xffff; c++) {
      let g;
      if (rangeOffset === 0) g = (c + delta) & 0xffff;
      else {
        g = dv.getUint16(rangeOffsets + 2 * s + rangeOffset + 2 * (c - start));
        if (g !== 0) g = (g + delta) & 0xffff;
      }
      if (g !== 0) cmap.set(c, g);
    }
  }

  /** The glyph's contours in font units, each a list of {x, y, on}; composite glyphs resolved. */
  function contours(g, depth = 0) {
    if (depth > 8) throw new Error("composite glyphs nested too deep");
    const start = glyphAt(g);
    if (start === glyphAt(g + 1)) return [];
    const p = tables.glyf + start;
    const count = dv.getInt16(p);
    if (count >= 0) {
      const endPoints = Array.from({ length: count }, (_, i) => dv.getUint16(p + 10 + 2 * i));
      const total = count ? endPoints[count - 1] + 1 : 0;
      let q = p + 12 + 2 * count + dv.getUint16(p + 10 + 2 * count);
      const flags = [];
      while (flags.length < total) {
        const f = buf[q++];
        flags.push(f);
        if (f & 8) for (let r = buf[q++]; r > 0; r--) flags.push(f);
      }
      const read = (shortBit, sameBit) => {
        let v = 0;
        return flags.map((f) => {
          if (f & shortBit) v += f & sameBit ? buf[q++] : -buf[q++];
          else if (!(f & sameBit)) ((v += dv.getInt16(q)), (q += 2));
          return v;
        });
      };
      const xs = read(2, 16);
      const ys = read(4, 32);
      const out = [];
      let first = 0;
      for (const last of endPoints) {
        out.push(flags.slice(first, last + 1).map((f, i) => ({ x: xs[first + i], y: ys[first + i], on: (f & 1) === 1 })));
        first = last + 1;
      }
      return out;
    }
    const out = [];
    let q = p + 10;
    let flags;
    do {
      flags = dv.getUint16(q);
      const component = dv.getUint16(q + 2);
      q += 4;
      let dx, dy;
      if (flags & 1) ((dx = dv.getInt16(q)), (dy = dv.getInt16(q + 2)), (q += 4));
      else ((dx = dv.getInt8(q)), (dy = dv.getInt8(q + 1)), (q += 2));
      if (!(flags & 2)) throw new Error(`glyph ${g}: a component placed by matching points`);
      const f2 = (o) => dv.getInt16(o) / 16384;
      let [a, b, c, d] = [1, 0, 0, 1];
      if (flags & 8) ((a = d = f2(q)), (q += 2));
      else if (flags & 0x40) ((a = f2(q)), (d = f2(q + 2)), (q += 4));
      else if (flags & 0x80) ((a = f2(q)), (b = f2(q + 2)), (c = f2(q + 4)), (d = f2(q + 6)), (q += 8));
      for (const contour of contours(component, depth + 1))
        out.push(contour.map((pt) => ({ x: a * pt.x + c * pt.y + dx, y: b * pt.x + d * pt.y + dy, on: pt.on })));
    } while (flags & 0x20);
    return out;
  }

  return { unitsPerEm, ascender, descender, cmap, advance, contours };
}

/** A closed contour of on/off-curve points as a polygon (quadratic curves in 8 segments). */
function flatten(points) {
  if (points.length === 0) return [];
  const at = points.findIndex((p) => p.on);
  const seq =
    at === -1
      ? [{ x: (points[0].x + points.at(-1).x) / 2, y: (points[0].y + points.at(-1).y) / 2, on: true }, ...points]
      : [...points.slice(at), ...points.slice(0, at)];
  const out = [[seq[0].x, seq[0].y]];
  let current = seq[0];
  let control = null;
  const quad = (from, ctrl, to) => {
    for (let i = 1; i <= 8; i++) {
      const t = i / 8;
      const u = 1 - t;
      out.push([u * u * from.x + 2 * u * t * ctrl.x + t * t * to.x, u * u * from.y + 2 * u * t * ctrl.y + t * t * to.y]);
    }
  };
  for (let i = 1; i <= seq.length; i++) {
    const p = seq[i % seq.length];
    if (p.on) {
      if (control) quad(current, control, p);
      else out.push([p.x, p.y]);
      control = null;
      current = p;
    } else {
      if (control) {
        const mid = { x: (control.x + p.x) / 2, y: (control.y + p.y) / 2, on: true };
        quad(current, control, mid);
        current = mid;
      }
      control = p;
    }
  }
  return out;
}

/** Fills polygons (pixel units, y down) with the non-zero rule: {left, top, width, height, rows of 0/1}. */
function rasterize(polygons) {
  const edges = [];
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const poly of polygons)
    for (let i = 0; i + 1 < poly.length; i++) {
      const [x0, y0] = poly[i];
      const [x1, y1] = poly[i + 1];
      [minX, maxX, minY, maxY] = [Math.min(minX, x0, x1), Math.max(maxX, x0, x1), Math.min(minY, y0, y1), Math.max(maxY, y0, y1)];
      if (y0 !== y1) edges.push({ x0, y0, x1, y1, dir: y1 > y0 ? 1 : -1 });
    }
  if (edges.length === 0) return null;
  const left = Math.floor(minX);
  let top = Math.floor(minY);
  const width = Math.ceil(maxX) - left;
  const height = Math.ceil(maxY) - Math.floor(minY);
  const coverage = new Float64Array(width * height);
  for (let sy = 0; sy < height * SAMPLES; sy++) {
    const y = top + (sy + 0.5) / SAMPLES;
    const hits = [];
    for (const e of edges)
      if (y >= Math.min(e.y0, e.y1) && y < Math.max(e.y0, e.y1))
        hits.push({ x: e.x0 + ((y - e.y0) * (e.x1 - e.x0)) / (e.y1 - e.y0), dir: e.dir });
    hits.sort((a, b) => a.x - b.x);
    let winding = 0;
    for (let h = 0; h + 1 < hits.length; h++) {
      winding += hits[h].dir;
      if (winding === 0) continue;
      const from = Math.max(0, Math.ceil((hits[h].x - left) * SAMPLES - 0.5));
      const to = Math.min(width * SAMPLES - 1, Math.ceil((hits[h + 1].x - left) * SAMPLES - 0.5) - 1);
      for (let sx = from; sx <= to; sx++) coverage[Math.floor(sy / SAMPLES) * width + Math.floor(sx / SAMPLES)] += 1 / (SAMPLES * SAMPLES);
    }
  }
  const rows = Array.from({ length: height }, (_, r) =>
    Array.from({ length: width }, (_, c) => (coverage[r * width + c] >= THRESHOLD ? 1 : 0)),
  );
  // Trim empty edges.
  while (rows.length && rows[0].every((v) => v === 0)) (rows.shift(), top++);
  while (rows.length && rows.at(-1).every((v) => v === 0)) rows.pop();
  if (rows.length === 0) return null;
  let l = 0;
  while (rows.every((r) => r[l] === 0)) l++;
  let w = rows[0].length;
  while (rows.every((r) => r[w - 1] === 0)) w--;
  return { left: left + l, top, width: w - l, height: rows.length, rows: rows.map((r) => r.slice(l, w)) };
}

const font = parseFont(readFileSync(FONT_FILE));
const scale = PX / font.unitsPerEm;
const records = [];
let count = 0;
for (const [from, to] of RANGES)
  for (let cp = from; cp <= to; cp++) {
    const g = font.cmap.get(cp);
    if (g === undefined) continue;
    const advanceUnits = font.advance(g);
    const advance = Math.round(advanceUnits * scale);
    // Whole-pixel advances: the glyph is stretched to fill exactly its rounded advance.
    const sx = advanceUnits > 0 ? advance / advanceUnits : scale;
    const glyph = rasterize(font.contours(g).map((c) => flatten(c).map(([x, y]) => [x * sx, -y * scale])));
    const [left, top, width, height] = glyph ? [glyph.left, -glyph.top, glyph.width, glyph.height] : [0, 0, 0, 0];
    if (advance > 255 || width > 255 || height > 255 || Math.abs(left) > 127 || Math.abs(top) > 127)
      throw new Error(`U+${cp.toString(16)} too large`);
    const stride = Math.ceil(width / 8);
    const bytes = [cp >> 8, cp & 0xff, advance, left & 0xff, top & 0xff, width, height];
    for (let r = 0; r < height; r++)
      for (let b = 0; b < stride; b++) {
        let byte = 0;
        for (let bit = 0; bit < 8; bit++) if (glyph.rows[r][b * 8 + bit]) byte |= 0x80 >> bit;
        bytes.push(byte);
      }
    records.push(...bytes);
    count++;
  }

const data = Buffer.from(records).toString("base64");
const ascent = Math.ceil(font.ascender * scale);
const descent = Math.ceil(-font.descender * scale);
writeFileSync(
  TARGET,
  `// Generated by scripts/build-receipt-font.mjs from DejaVu Sans (licence: ./LICENSE-DejaVu.txt): do not edit.
// ${count} glyphs at ${PX} px per em, one bit a pixel. Each record: code point (u16), advance, left, top
// (above the baseline), width, height (u8, left and top signed), then the rows, each ceil(width / 8)
// bytes, the leftmost pixel in the high bit.
export const FONT_PX = ${PX};
export const FONT_ASCENT = ${ascent};
export const FONT_DESCENT = ${descent};
export const FONT_GLYPHS =
  "${data}";
`,
);
console.log(`build-receipt-font: ${count} glyphs, ${records.length} bytes (${data.length} in base64) → ${path.relative(root, TARGET)}`);

// The Unicode bidirectional algorithm (UAX #9) for one line without explicit embeddings, which is
// all a receipt's line holds: the paragraph's direction from its first strong letter (P2–P3), the
// weak and neutral types resolved (W1–W7, N1–N2), levels (I1–I2), then each run of a level reversed
// (L2) and brackets mirrored where they read right to left (L4). Arabic reads right to left while
// digits and Latin words inside it keep left to right ("A-042", "17:53").

export type BidiClass = "L" | "R" | "AL" | "EN" | "AN" | "ES" | "ET" | "CS" | "NSM" | "WS" | "ON";

export function bidiClass(cp: number): BidiClass {
  if (cp >= 0x30 && cp <= 0x39) return "EN";
  if (cp === 0xb2 || cp === 0xb3 || cp === 0xb9 || (cp >= 0x06f0 && cp <= 0x06f9)) return "EN";
  if ((cp >= 0x0660 && cp <= 0x0669) || cp === 0x066b || cp === 0x066c) return "AN";
  if (cp === 0x2b || cp === 0x2d || cp === 0x2212) return "ES";
  if (
    cp === 0x23 ||
    cp === 0x24 ||
    cp === 0x25 ||
    (cp >= 0xa2 && cp <= 0xa5) ||
    cp === 0xb0 ||
    cp === 0xb1 ||
    cp === 0x20ac ||
    cp === 0x066a
  )
    return "ET";
  if (cp === 0x2c || cp === 0x2e || cp === 0x2f || cp === 0x3a || cp === 0xa0 || cp === 0x060c) return "CS";
  if (cp === 0x20 || cp === 0x09) return "WS";
  if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x0610 && cp <= 0x061a) || (cp >= 0x064b && cp <= 0x065f) || cp === 0x0670) return "NSM";
  if ((cp >= 0x0590 && cp <= 0x05ff) || (cp >= 0xfb1d && cp <= 0xfb4f)) return "R";
  if ((cp >= 0x0600 && cp <= 0x08ff) || (cp >= 0xfb50 && cp <= 0xfdff) || (cp >= 0xfe70 && cp <= 0xfeff)) return "AL";
  if ((cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0xaa || cp === 0xb5 || cp === 0xba) return "L";
  if (cp >= 0xc0 && cp !== 0xd7 && cp !== 0xf7 && cp < 0x2000) return "L";
  if (cp >= 0x2000 && cp <= 0x2bff) return "ON";
  if (cp < 0xc0) return "ON";
  return "L";
}

const MIRRORED = new Map<number, number>([
  [0x28, 0x29],
  [0x29, 0x28],
  [0x3c, 0x3e],
  [0x3e, 0x3c],
  [0x5b, 0x5d],
  [0x5d, 0x5b],
  [0x7b, 0x7d],
  [0x7d, 0x7b],
  [0xab, 0xbb],
  [0xbb, 0xab],
  [0x2039, 0x203a],
  [0x203a, 0x2039],
]);

/** The character drawn for `cp` at `level`: a bracket faces the other way in a right-to-left run. */
export const mirrored = (cp: number, level: number) => (level % 2 === 1 ? (MIRRORED.get(cp) ?? cp) : cp);

/** 0 (left to right) or 1 (right to left): the direction of the text's first strong letter, left to right when it has none. */
export function paragraphLevel(classes: readonly BidiClass[]): 0 | 1 {
  for (const c of classes) {
    if (c === "L") return 0;
    if (c === "R" || c === "AL") return 1;
  }
  return 0;
}

/** Each character's embedding level. */
export function bidiLevels(input: readonly BidiClass[], paragraph: 0 | 1): number[] {
  const types: BidiClass[] = [...input];
  const n = types.length;
  const edge: BidiClass = paragraph === 1 ? "R" : "L";
  // W1: a mark takes the type of what it marks.
  for (let i = 0; i < n; i++) if (types[i] === "NSM") types[i] = i === 0 ? edge : types[i - 1]!;
  // W2: European digits after Arabic letters are Arabic numbers; W3: AL is R.
  let strong: BidiClass = edge;
  for (let i = 0; i < n; i++) {
    const t = types[i]!;
    if (t === "L" || t === "R" || t === "AL") strong = t;
    else if (t === "EN" && strong === "AL") types[i] = "AN";
  }
  for (let i = 0; i < n; i++) if (types[i] === "AL") types[i] = "R";
  // W4: one separator between two numbers of a type joins them.
  for (let i = 1; i + 1 < n; i++) {
    const [before, t, after] = [types[i - 1], types[i], types[i + 1]];
    if (t === "ES" && before === "EN" && after === "EN") types[i] = "EN";
    else if (t === "CS" && before === after && (before === "EN" || before === "AN")) types[i] = before!;
  }
  // W5: terminators next to European digits are digits ("15%", "€ 20").
  for (let i = 0; i < n; i++) {
    if (types[i] !== "ET") continue;
    let j = i;
    while (j < n && types[j] === "ET") j++;
    if ((i > 0 && types[i - 1] === "EN") || (j < n && types[j] === "EN")) for (let k = i; k < j; k++) types[k] = "EN";
    i = j - 1;
  }
  // W6: what remains of separators and terminators is neutral.
  for (let i = 0; i < n; i++) if (types[i] === "ES" || types[i] === "ET" || types[i] === "CS") types[i] = "ON";
  // W7: European digits after a left-to-right letter are left to right.
  strong = edge;
  for (let i = 0; i < n; i++) {
    const t = types[i]!;
    if (t === "L" || t === "R") strong = t;
    else if (t === "EN" && strong === "L") types[i] = "L";
  }
  // N1–N2: neutrals between two letters of one direction (digits count as right to left) take it, else the paragraph's.
  const direction = (t: BidiClass | undefined): "L" | "R" | null => (t === "L" ? "L" : t === "R" || t === "EN" || t === "AN" ? "R" : null);
  for (let i = 0; i < n; i++) {
    if (direction(types[i]) !== null) continue;
    let j = i;
    while (j < n && direction(types[j]) === null) j++;
    const before = i === 0 ? edge : direction(types[i - 1])!;
    const after = j === n ? edge : direction(types[j])!;
    const resolved: BidiClass = before === after ? before : edge;
    for (let k = i; k < j; k++) types[k] = resolved;
    i = j - 1;
  }
  // I1–I2.
  return types.map((t) => {
    if (paragraph === 0) return t === "R" ? 1 : t === "AN" || t === "EN" ? 2 : 0;
    return t === "L" || t === "EN" || t === "AN" ? 2 : 1;
  });
}

/** The order to draw the characters in, left to right (L2): indexes into the logical order. */
export function visualOrder(levels: readonly number[]): number[] {
  const order = levels.map((_, i) => i);
  if (levels.length === 0) return order;
  const highest = Math.max(...levels);
  const lowestOdd = Math.min(...levels.filter((l) => l % 2 === 1), highest + 1);
  for (let level = highest; level >= lowestOdd; level--) {
    for (let i = 0; i < order.length; i++) {
      if (levels[order[i]!]! < level) continue;
      let j = i;
      while (j < order.length && levels[order[j]!]! >= level) j++;
      order.splice(i, j - i, ...order.slice(i, j).reverse());
      i = j;
    }
  }
  return order;
}

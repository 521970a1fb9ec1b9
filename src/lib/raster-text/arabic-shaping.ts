// Arabic letters take their joined shapes (Unicode's joining rules, ArabicShaping.txt): each letter
// becomes its presentation form (U+FE70–U+FEFF, U+FB50–U+FBFF) for where it stands in its word:
// isolated, final (joined to the letter before it), initial (joined to the one after it) or medial.
// Lam followed by alef becomes the lam-alef ligature, as every Arabic font writes it. The text stays
// in logical order; src/lib/raster-text/bidi.ts orders it for drawing.

/** The presentation forms of a letter: isolated, final, initial, medial (two for letters that join only to the letter before them). */
const FORMS = new Map<number, readonly number[]>();

// U+0621–U+064A: their forms follow each other from U+FE80 in the letters' order, four for a
// letter that joins on both sides, two for one that joins only to the letter before it, one for hamza.
const BASIC: readonly [number, number][] = [
  [0x0621, 1],
  [0x0622, 2],
  [0x0623, 2],
  [0x0624, 2],
  [0x0625, 2],
  [0x0626, 4],
  [0x0627, 2],
  [0x0628, 4],
  [0x0629, 2],
  [0x062a, 4],
  [0x062b, 4],
  [0x062c, 4],
  [0x062d, 4],
  [0x062e, 4],
  [0x062f, 2],
  [0x0630, 2],
  [0x0631, 2],
  [0x0632, 2],
  [0x0633, 4],
  [0x0634, 4],
  [0x0635, 4],
  [0x0636, 4],
  [0x0637, 4],
  [0x0638, 4],
  [0x0639, 4],
  [0x063a, 4],
  [0x0641, 4],
  [0x0642, 4],
  [0x0643, 4],
  [0x0644, 4],
  [0x0645, 4],
  [0x0646, 4],
  [0x0647, 4],
  [0x0648, 2],
  [0x0649, 2],
  [0x064a, 4],
];
{
  let form = 0xfe80;
  for (const [letter, count] of BASIC) {
    FORMS.set(
      letter,
      Array.from({ length: count }, (_, i) => form + i),
    );
    form += count;
  }
}
// Letters of Persian, Urdu and the Maghreb (peh, tcheh, jeh, veh, keheh, gaf, farsi yeh, alef wasla).
for (const [letter, first, count] of [
  [0x0671, 0xfb50, 2],
  [0x067e, 0xfb56, 4],
  [0x06a4, 0xfb6a, 4],
  [0x0686, 0xfb7a, 4],
  [0x0698, 0xfb8a, 2],
  [0x06a9, 0xfb8e, 4],
  [0x06af, 0xfb92, 4],
  [0x06cc, 0xfbfc, 4],
] as const)
  FORMS.set(
    letter,
    Array.from({ length: count }, (_, i) => first + i),
  );

const TATWEEL = 0x0640;
const LAM = 0x0644;
/** Lam + alef (with madda, hamza above, hamza below, plain): the ligature's isolated form (its final form is the next code point). */
const LAM_ALEF = new Map([
  [0x0622, 0xfef5],
  [0x0623, 0xfef7],
  [0x0625, 0xfef9],
  [0x0627, 0xfefb],
]);

/** Marks drawn over or under the letter before them (harakat, shadda, superscript alef, Quranic marks). */
export const isMark = (cp: number) =>
  (cp >= 0x0610 && cp <= 0x061a) ||
  (cp >= 0x064b && cp <= 0x065f) ||
  cp === 0x0670 ||
  (cp >= 0x06d6 && cp <= 0x06ed) ||
  (cp >= 0x0300 && cp <= 0x036f);

type Joining = "dual" | "right" | "causing" | "none";
function joining(cp: number): Joining {
  if (cp === TATWEEL || cp === 0x200d) return "causing";
  const forms = FORMS.get(cp);
  if (!forms || forms.length === 1) return "none";
  return forms.length === 4 ? "dual" : "right";
}

/** A letter (or any other character) with the marks written on it, in logical order. */
export interface Cluster {
  /** The code point drawn: a presentation form for an Arabic letter. */
  cp: number;
  /** The character it stands for (its bidi class is the letter's). */
  source: number;
  marks: number[];
}

/** The text as clusters, each Arabic letter in its joined form. */
export function shapeArabic(text: string): Cluster[] {
  const clusters: Cluster[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const last = clusters.at(-1);
    if (isMark(cp) && last) last.marks.push(cp);
    else clusters.push({ cp, source: cp, marks: [] });
  }
  const joinsForward = (i: number) => i >= 0 && i < clusters.length && ["dual", "causing"].includes(joining(clusters[i]!.source));
  const joinsBackward = (i: number) => i >= 0 && i < clusters.length && joining(clusters[i]!.source) !== "none";
  const out: Cluster[] = [];
  for (let i = 0; i < clusters.length; i++) {
    const c = clusters[i]!;
    const forms = FORMS.get(c.source);
    if (!forms) {
      out.push(c);
      continue;
    }
    const fromBefore = joinsForward(i - 1);
    const next = clusters[i + 1];
    if (c.source === LAM && next && LAM_ALEF.has(next.source)) {
      out.push({ cp: LAM_ALEF.get(next.source)! + (fromBefore ? 1 : 0), source: c.source, marks: [...c.marks, ...next.marks] });
      i++;
      continue;
    }
    const toAfter = forms.length === 4 && joinsBackward(i + 1);
    const form = fromBefore ? (toAfter ? 3 : 1) : toAfter ? 2 : 0;
    out.push({ ...c, cp: forms[Math.min(form, forms.length - 1)]! });
  }
  return out;
}

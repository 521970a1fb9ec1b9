import { describe, expect, it } from "vitest";
import {
  bidiClass,
  bidiLevels,
  canDraw,
  drawText,
  LINE_HEIGHT,
  mirrored,
  paragraphLevel,
  shapeArabic,
  visualOrder,
} from "../../src/lib/raster-text";
import { TADHKIRATUK } from "./raster-text.reference";

// Text drawn for the printer (src/lib/raster-text, docs/receipts.md): Arabic letters joined, right
// to left, numbers and Latin left to right, drawn from the committed bitmap font.

const hex = (text: string) => shapeArabic(text).map((c) => c.cp.toString(16));
/** The characters of a line in the order they are drawn, left to right (brackets mirrored where they read right to left). */
function drawnOrder(text: string): string {
  const cps = [...text].map((ch) => ch.codePointAt(0)!);
  const classes = cps.map(bidiClass);
  const levels = bidiLevels(classes, paragraphLevel(classes));
  return visualOrder(levels)
    .map((i) => String.fromCodePoint(mirrored(cps[i]!, levels[i]!)))
    .join("");
}
/** A bitmap's inked rows, cut to the ink, as "#" and "." (the committed reference's form). */
function inkRows(text: string): string[] {
  const [bitmap] = drawText(text, { width: 256 });
  const rows = Array.from({ length: bitmap!.height }, (_, y) =>
    Array.from({ length: bitmap!.width }, (_, x) =>
      (bitmap!.data[y * (bitmap!.width / 8) + (x >> 3)]! & (0x80 >> (x & 7))) !== 0 ? "#" : ".",
    ).join(""),
  );
  const inked = rows.filter((r) => r.includes("#"));
  const left = Math.min(...inked.map((r) => r.indexOf("#")));
  const right = Math.max(...inked.map((r) => r.lastIndexOf("#")));
  return rows
    .slice(
      rows.findIndex((r) => r.includes("#")),
      rows.length - [...rows].reverse().findIndex((r) => r.includes("#")),
    )
    .map((r) => r.slice(left, right + 1));
}

describe("Arabic shaping", () => {
  it("gives each letter its joined form: initial, medial, final or isolated, by its neighbours' joining", () => {
    // تذكرة: teh initial (joins the thal), thal final (thal never joins what follows), kaf initial, reh final, teh marbuta isolated.
    expect(hex("تذكرة")).toEqual(["fe97", "feac", "fedb", "feae", "fe93"]);
    // بيت: beh initial, yeh medial, teh final.
    expect(hex("بيت")).toEqual(["fe91", "fef4", "fe96"]);
    // A space ends the joining.
    expect(hex("ب ب")).toEqual(["fe8f", "20", "fe8f"]);
  });

  it("writes lam-alef as its ligature, final after a joining letter; marks stay on their letter", () => {
    expect(hex("لا")).toEqual(["fefb"]);
    expect(hex("سلام")).toEqual(["feb3", "fefc", "fee1"]);
    const [first] = shapeArabic("بَ");
    expect(first).toMatchObject({ cp: 0xfe8f, marks: [0x064e] });
  });
});

describe("the bidirectional order", () => {
  it("draws Arabic right to left and keeps numbers, codes and Latin words left to right inside it", () => {
    expect(drawnOrder("تذكرة")).toBe("ةركذت");
    expect(drawnOrder("تذكرة A-042")).toBe("A-042 ةركذت");
    expect(drawnOrder("الترتيب 12")).toBe("12 بيترتلا");
    expect(drawnOrder("وكالة الرباط 2 (مركز)")).toBe("(زكرم) 2 طابرلا ةلاكو");
    // A Latin line stays as it is, and so does a line of digits.
    expect(drawnOrder("Agence Plateau 2")).toBe("Agence Plateau 2");
    expect(drawnOrder("28/11/2026, 17:53")).toBe("28/11/2026, 17:53");
  });
});

describe("drawing", () => {
  it("draws Arabic, Latin and digits, not scripts the font lacks", () => {
    expect(canDraw("تذكرتك A-042 Élan")).toBe(true);
    expect(canDraw("東京")).toBe(false);
  });

  it("draws a known word as the committed reference (rows of dots): تذكرتك, joined, right to left", () => {
    expect(inkRows("تذكرتك")).toEqual(TADHKIRATUK);
  });

  it("cuts a long line at spaces into lines of the given width, each one line high", () => {
    const lines = drawText("يرجى الاحتفاظ بهذه التذكرة يرجى الاحتفاظ بهذه التذكرة يرجى الاحتفاظ بهذه التذكرة", { width: 576 });
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect([line.width, line.height, line.data.length]).toEqual([576, LINE_HEIGHT, 72 * LINE_HEIGHT]);
  });
});

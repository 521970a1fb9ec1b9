import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { encode as encodePng } from "fast-png";
import { encode as encodeQr } from "uqr";
import { describe, expect, it } from "vitest";
import { escposReceipt, RECEIPT_PRINT_DOTS, type ReceiptContent } from "../../src/domain/receipt";
import { drawText, LINE_HEIGHT, type Bitmap } from "../../src/lib/raster-text";
import { decodeEscpos, type EscposDocument } from "../helpers/escpos";

// An Arabic ticket's ESC/POS receipt drawn as the printer would print it, into
// test/browser/.artifacts/receipts/ (not committed), to be looked at: the raster lines as they
// are, the text lines in the receipt's font at their size, the QR from its data. Node, for the file.

const ARTIFACTS = path.join(import.meta.dirname, "..", "browser", ".artifacts", "receipts");

/** The printed receipt as 8-bit grey rows (0 ink, 255 paper), 576 dots wide with a margin. */
function paper(doc: EscposDocument): { width: number; height: number; data: Uint8Array } {
  const margin = 16;
  const width = RECEIPT_PRINT_DOTS + 2 * margin;
  const blocks: { bitmap: (x: number, y: number) => boolean; width: number; height: number }[] = [];
  const fromBitmap = (b: Bitmap, scale = 1) => ({
    width: b.width * scale,
    height: b.height * scale,
    bitmap: (x: number, y: number) => {
      const [bx, by] = [Math.floor(x / scale), Math.floor(y / scale)];
      return (b.data[by * (b.width / 8) + (bx >> 3)]! & (0x80 >> (bx & 7))) !== 0;
    },
  });
  for (const item of doc.printed) {
    if ("image" in item) blocks.push(fromBitmap(item.image));
    else if ("line" in item) {
      const { text, width: w } = item.line;
      if (text === "") blocks.push({ width: RECEIPT_PRINT_DOTS, height: LINE_HEIGHT, bitmap: () => false });
      for (const b of text === "" ? [] : drawText(text, { width: RECEIPT_PRINT_DOTS / w, bold: item.line.bold }))
        blocks.push(fromBitmap(b, w));
    } else {
      const qr = encodeQr(item.qr.data ?? "", { ecc: "M", border: 0 });
      const size = qr.size * (item.qr.moduleSize ?? 6);
      const left = Math.floor((RECEIPT_PRINT_DOTS - size) / 2);
      blocks.push({
        width: RECEIPT_PRINT_DOTS,
        height: size,
        bitmap: (x, y) =>
          x >= left &&
          x < left + size &&
          qr.data[Math.floor(y / (item.qr.moduleSize ?? 6))]![Math.floor((x - left) / (item.qr.moduleSize ?? 6))]!,
      });
    }
  }
  const height = blocks.reduce((sum, b) => sum + b.height, 0) + 2 * margin;
  const data = new Uint8Array(width * height).fill(255);
  let top = margin;
  for (const b of blocks) {
    for (let y = 0; y < b.height; y++) for (let x = 0; x < b.width; x++) if (b.bitmap(x, y)) data[(top + y) * width + margin + x] = 0;
    top += b.height;
  }
  return { width, height, data };
}

const arabic: ReceiptContent = {
  displayCode: "A-042",
  organizationName: "بنك الأمل",
  serviceName: "عمليات الصندوق",
  locationName: "وكالة الرباط 2",
  issuedAt: "28/11/2026, 17:53",
  statusUrl: "https://api.test/t/tkt_example#token=abc",
  language: "ar",
};

describe("an Arabic receipt as printed", () => {
  it("draws its Arabic lines as images and its code and time as text, and is written to a PNG to look at", () => {
    const doc = decodeEscpos(escposReceipt(arabic));
    const kinds = doc.printed.map((p) => ("image" in p ? "image" : "qr" in p ? "qr" : p.line.text));
    expect(kinds).toEqual(["image", "image", "A-042", "", "image", "image", "28/11/2026, 17:53", "", "image", "qr", "", "image"]);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(path.join(ARTIFACTS, "receipt-ar.png"), encodePng({ ...paper(doc), channels: 1, depth: 8 }));
    const french = decodeEscpos(
      escposReceipt({ ...arabic, organizationName: "Banque Élan", serviceName: "Caisse", locationName: "Agence Plateau", language: "fr" }),
    );
    expect(french.images).toEqual([]);
    writeFileSync(path.join(ARTIFACTS, "receipt-fr.png"), encodePng({ ...paper(french), channels: 1, depth: 8 }));
  });

  it("writes a known word four times enlarged, to look at its joins dot by dot", () => {
    const [word] = drawText("تذكرتك سلام", { width: 256 });
    const zoom = 4;
    const data = new Uint8Array(word!.width * zoom * word!.height * zoom);
    for (let y = 0; y < word!.height * zoom; y++)
      for (let x = 0; x < word!.width * zoom; x++) {
        const [bx, by] = [Math.floor(x / zoom), Math.floor(y / zoom)];
        data[y * word!.width * zoom + x] = word!.data[by * (word!.width / 8) + (bx >> 3)]! & (0x80 >> (bx & 7)) ? 0 : 255;
      }
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(
      path.join(ARTIFACTS, "word-ar-x4.png"),
      encodePng({ width: word!.width * zoom, height: word!.height * zoom, data, channels: 1, depth: 8 }),
    );
  });
});

// A decoder of the ESC/POS subset our receipts use (docs/receipts.md), strict enough that a
// wrong length or an unknown command fails the test rather than being skipped.

export interface EscposLine {
  text: string;
  align: "left" | "centre" | "right";
  /** GS ! n: width multiplier (high nibble + 1) and height multiplier (low nibble + 1). */
  width: number;
  height: number;
  bold: boolean;
}

export interface EscposQr {
  model: number | null;
  moduleSize: number | null;
  errorCorrection: string | null;
  data: string | null;
  printed: boolean;
}

/** `GS v 0`: a raster bit image, `width` dots (8 a byte) by `height` rows, leftmost dot in the high bit. */
export interface EscposImage {
  width: number;
  height: number;
  /** 0 normal, 1 double width, 2 double height, 3 both. */
  mode: number;
  data: Uint8Array;
}

export interface EscposDocument {
  commands: string[];
  lines: EscposLine[];
  images: EscposImage[];
  /** What prints, in order: text lines, raster images and the QR symbol. */
  printed: ({ line: EscposLine } | { image: EscposImage } | { qr: EscposQr })[];
  qr: EscposQr | null;
  codePage: number | null;
}

const WPC1252_HIGH = new TextDecoder("windows-1252");

export function decodeEscpos(bytes: Uint8Array): EscposDocument {
  const commands: string[] = [];
  const lines: EscposLine[] = [];
  const images: EscposImage[] = [];
  const printed: EscposDocument["printed"] = [];
  let align: EscposLine["align"] = "left";
  let size = 0;
  let bold = false;
  let text: number[] = [];
  let qr: EscposQr | null = null;
  let codePage: number | null = null;
  let i = 0;
  const need = (n: number) => {
    if (i + n > bytes.length) throw new Error(`truncated command at byte ${i}`);
  };
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b === 0x0a) {
      const line = { text: WPC1252_HIGH.decode(new Uint8Array(text)), align, width: (size >> 4) + 1, height: (size & 0x0f) + 1, bold };
      lines.push(line);
      printed.push({ line });
      text = [];
      i += 1;
    } else if (b === 0x1b) {
      need(2);
      const c = bytes[i + 1]!;
      if (c === 0x40) {
        commands.push("init");
        align = "left";
        size = 0;
        bold = false;
        i += 2;
        continue;
      }
      need(3);
      const n = bytes[i + 2]!;
      if (c === 0x74) ((codePage = n), commands.push(`codepage ${n}`));
      else if (c === 0x61) ((align = (["left", "centre", "right"] as const)[n % 48]!), commands.push(`align ${align}`));
      else if (c === 0x45) ((bold = n === 1), commands.push(`bold ${bold}`));
      else if (c === 0x64) commands.push(`feed ${n}`);
      else throw new Error(`unknown ESC ${c.toString(16)} at byte ${i}`);
      i += 3;
    } else if (b === 0x1d) {
      need(2);
      const c = bytes[i + 1]!;
      if (c === 0x21) {
        need(3);
        size = bytes[i + 2]!;
        commands.push(`size ${size.toString(16)}`);
        i += 3;
      } else if (c === 0x56) {
        need(3);
        const m = bytes[i + 2]!;
        const long = m === 65 || m === 66;
        if (long) need(4);
        commands.push(`cut ${m}`);
        i += long ? 4 : 3;
      } else if (c === 0x76) {
        // GS v 0 m xL xH yL yH d1…dk, k = (xL + xH × 256) × (yL + yH × 256); only at the start of a line.
        need(8);
        if (bytes[i + 2] !== 0x30) throw new Error(`GS v ${bytes[i + 2]} is not GS v 0 at byte ${i}`);
        if (text.length) throw new Error(`raster image after unprinted text at byte ${i}`);
        const mode = bytes[i + 3]!;
        if (![0, 1, 2, 3, 48, 49, 50, 51].includes(mode)) throw new Error(`GS v 0 mode ${mode} at byte ${i}`);
        const x = bytes[i + 4]! | (bytes[i + 5]! << 8);
        const y = bytes[i + 6]! | (bytes[i + 7]! << 8);
        if (x === 0 || y === 0) throw new Error(`empty raster image at byte ${i}`);
        need(8 + x * y);
        const image = { width: x * 8, height: y, mode: mode % 48, data: bytes.slice(i + 8, i + 8 + x * y) };
        images.push(image);
        printed.push({ image });
        commands.push(`raster ${image.width}x${image.height}`);
        i += 8 + x * y;
      } else if (c === 0x28 && bytes[i + 2] === 0x6b) {
        need(7);
        const length = bytes[i + 3]! | (bytes[i + 4]! << 8);
        need(5 + length);
        const cn = bytes[i + 5]!;
        const fn = bytes[i + 6]!;
        const data = bytes.slice(i + 7, i + 5 + length);
        if (cn !== 49) throw new Error(`GS ( k for symbol ${cn}, not QR`);
        qr ??= { model: null, moduleSize: null, errorCorrection: null, data: null, printed: false };
        if (fn === 65) qr.model = data[0]! - 48;
        else if (fn === 67) qr.moduleSize = data[0]!;
        else if (fn === 69) qr.errorCorrection = ({ 48: "L", 49: "M", 50: "Q", 51: "H" } as Record<number, string>)[data[0]!] ?? null;
        else if (fn === 80) qr.data = new TextDecoder().decode(data.slice(1));
        else if (fn === 81) ((qr.printed = true), printed.push({ qr }));
        else throw new Error(`unknown QR function ${fn}`);
        commands.push(`qr ${fn}`);
        i += 5 + length;
      } else throw new Error(`unknown GS ${c.toString(16)} at byte ${i}`);
    } else if (b < 0x20) {
      throw new Error(`unexpected control byte ${b.toString(16)} at byte ${i}`);
    } else {
      text.push(b);
      i += 1;
    }
  }
  if (text.length) throw new Error("text after the last line feed");
  return { commands, lines, images, printed, qr, codePage };
}

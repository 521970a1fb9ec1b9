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

export interface EscposDocument {
  commands: string[];
  lines: EscposLine[];
  qr: EscposQr | null;
  codePage: number | null;
}

const WPC1252_HIGH = new TextDecoder("windows-1252");

export function decodeEscpos(bytes: Uint8Array): EscposDocument {
  const commands: string[] = [];
  const lines: EscposLine[] = [];
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
      lines.push({ text: WPC1252_HIGH.decode(new Uint8Array(text)), align, width: (size >> 4) + 1, height: (size & 0x0f) + 1, bold });
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
        else if (fn === 81) qr.printed = true;
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
  return { commands, lines, qr, codePage };
}

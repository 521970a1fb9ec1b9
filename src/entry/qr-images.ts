import { encode } from "uqr";
import { validationError } from "../http/errors";
import { bilevelPng } from "../lib/png";

/** The white margin readers need around a QR code, in modules (ISO/IEC 18004). */
export const QUIET_ZONE = 4;
export const QR_IMAGE_SIZE = { min: 64, max: 1024, default: 200 } as const;

interface QrLayout {
  /** Modules on a side, quiet zone included. */
  modules: number;
  dark: boolean[][];
  /** Pixels per module and the margin that centres the code in the image. */
  moduleSize: number;
  offset: number;
}

/**
 * The module grid of `text` laid out in a size × size image. Modules get a whole number of
 * pixels (a fractional module blurs edges and defeats some readers); the leftover pixels
 * become extra white margin. A code too dense for the size is refused, never squeezed.
 */
function layout(text: string, size: number): QrLayout {
  // M recovers 15% damage: the usual choice for printed codes, at a modest cost in density.
  const qr = encode(text, { ecc: "M", border: QUIET_ZONE });
  const moduleSize = Math.floor(size / qr.size);
  if (moduleSize < 1) {
    throw validationError("size", `this token needs an image of at least ${qr.size} pixels`, { minimum: qr.size });
  }
  return { modules: qr.size, dark: qr.data, moduleSize, offset: Math.floor((size - qr.size * moduleSize) / 2) };
}

export async function qrPng(text: string, size: number): Promise<Uint8Array<ArrayBuffer>> {
  const { modules, dark, moduleSize, offset } = layout(text, size);
  return bilevelPng(size, size, (x, y) => {
    const col = Math.floor((x - offset) / moduleSize);
    const row = Math.floor((y - offset) / moduleSize);
    return row >= 0 && col >= 0 && row < modules && col < modules && dark[row]![col]!;
  });
}

/**
 * An SVG in module units (viewBox 0 0 N N) drawn at size × size pixels. Dark modules are
 * merged into horizontal runs, one path, so a dense code stays small.
 */
export function qrSvg(text: string, size: number): string {
  const { modules, dark } = layout(text, size);
  let path = "";
  dark.forEach((row, y) => {
    for (let x = 0; x < modules; x++) {
      if (!row[x]) continue;
      const start = x;
      while (x + 1 < modules && row[x + 1]) x++;
      const run = x - start + 1;
      path += `M${start} ${y}h${run}v1h-${run}z`;
    }
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${modules} ${modules}" shape-rendering="crispEdges">` +
    `<rect width="${modules}" height="${modules}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`
  );
}

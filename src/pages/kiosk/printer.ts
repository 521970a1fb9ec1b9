// Silent printing (docs/pages.md "Receipt printer"): the receipt's ESC/POS bytes
// (GET /v1/tickets/{id}/receipt) sent straight to a USB thermal printer through WebUSB. The
// branch pairs the printer once (requestDevice needs a person's tap: the kiosk's `printer=setup`
// address shows the button); every later visit finds it with getDevices(). Without WebUSB or a
// paired printer the kiosk uses the browser's print dialog.

// The WebUSB types are not in TypeScript's DOM library: the few members used here.
interface UsbEndpoint {
  endpointNumber: number;
  direction: "in" | "out";
  type: "bulk" | "interrupt" | "isochronous";
}
interface UsbInterface {
  interfaceNumber: number;
  claimed: boolean;
  alternate: { interfaceClass: number; endpoints: UsbEndpoint[] };
}
export interface UsbDevice {
  opened: boolean;
  productName?: string;
  configuration: { interfaces: UsbInterface[] } | null;
  open(): Promise<void>;
  selectConfiguration(value: number): Promise<void>;
  claimInterface(interfaceNumber: number): Promise<void>;
  transferOut(endpointNumber: number, data: BufferSource): Promise<{ status: string; bytesWritten: number }>;
}
interface Usb {
  getDevices(): Promise<UsbDevice[]>;
  requestDevice(options: { filters: { classCode?: number }[] }): Promise<UsbDevice>;
}

const PRINTER_CLASS = 7;

function usb(): Usb | null {
  return (navigator as unknown as { usb?: Usb }).usb ?? null;
}

/** Whether this browser can print silently at all (Chromium on a secure origin). */
export function canPairPrinter(): boolean {
  return usb() !== null;
}

/** The printer this kiosk was paired with, or null (no WebUSB, never paired, unplugged). */
export async function pairedPrinter(): Promise<UsbDevice | null> {
  const api = usb();
  if (!api) return null;
  try {
    const devices = await api.getDevices();
    return devices[0] ?? null;
  } catch {
    return null;
  }
}

/** The staff's one-time pairing: the browser's chooser, then the permission stays with this origin. */
export async function pairPrinter(): Promise<UsbDevice | null> {
  const api = usb();
  if (!api) return null;
  try {
    // No filter: many ESC/POS printers announce a vendor class rather than the printer class.
    return await api.requestDevice({ filters: [] });
  } catch {
    return null;
  }
}

/** Sends `bytes` to the printer's bulk OUT endpoint (the printer-class interface first). */
export async function printBytes(device: UsbDevice, bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  if (!device.opened) await device.open();
  if (!device.configuration) await device.selectConfiguration(1);
  const interfaces = device.configuration?.interfaces ?? [];
  const withOut = interfaces
    .map((i) => ({ i, out: i.alternate.endpoints.find((e) => e.direction === "out" && e.type === "bulk") }))
    .filter((x) => x.out)
    .sort((a, b) => Number(b.i.alternate.interfaceClass === PRINTER_CLASS) - Number(a.i.alternate.interfaceClass === PRINTER_CLASS));
  const chosen = withOut[0];
  if (!chosen?.out) throw new Error("the printer has no bulk OUT endpoint");
  if (!chosen.i.claimed) await device.claimInterface(chosen.i.interfaceNumber);
  const result = await device.transferOut(chosen.out.endpointNumber, bytes);
  if (result.status !== "ok") throw new Error(`the printer answered ${result.status}`);
}

// The entry area: QR tokens and NFC tags: entry by scan.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as nfcRoutes } from "./nfc.routes";
export { default as qrRoutes } from "./qr.routes";

// The widget area: public channels: the embeddable widget, the display board, the kiosk.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as embedRoutes } from "./embed.routes";
export { default as kioskRoutes } from "./kiosk.routes";
export { widgetCors, widgetOriginLock, default as widgetRoutes } from "./widget.routes";

// The tickets area: queues and tickets: join, call, moves, transfers, remote join, intake answers, the rooms' client.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as intakeRoutes } from "./intake.routes";
export { roomOf } from "./queue-rooms";
export { default as queueRoutes } from "./queues.routes";
export { default as remoteJoinRoutes } from "./remote-join.routes";
export { rulesChanged } from "./room-rules";
export { default as ticketMoveRoutes } from "./ticket-moves.routes";
export { default as ticketRoutes } from "./tickets.routes";
export { default as blendRoutes } from "./blend.routes";

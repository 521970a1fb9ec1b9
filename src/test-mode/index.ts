export { default as testModeRoutes } from "./test-mode.routes";
export { ensureTwin, twinOf } from "./twin";
export { sweepTwinLeftovers } from "./leftovers";
export { Simulation } from "./simulation";

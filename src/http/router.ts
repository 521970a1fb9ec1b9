import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context";
import { validationHook } from "./validation";

/** Every area's router: OpenAPI-documented routes whose validation failures share one shape. */
export function router() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

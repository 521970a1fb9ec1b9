export { QueueClient, type ClientOptions } from "./client.js";
export { QueueApiError, type ErrorCode, type ErrorEnvelope } from "./errors.js";
export { verifyWebhook, WebhookVerificationError, type HeadersLike, type VerifyOptions, type WebhookEvent } from "./webhooks.js";
export type {
  Answer,
  Args,
  CallOptions,
  CursorPaths,
  Item,
  Method,
  Operation,
  PathParams,
  PathsWith,
  QueryParams,
  RequestBody,
  RequestOptions,
} from "./types.js";
export type { components, operations, paths } from "../schema.js";

import type { Context } from "hono";
import type { ZodError } from "zod";
import { ApiError } from "./errors";

type Issue = ZodError["issues"][number];

function fieldOf(issue: Issue): string {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0) path.push(issue.keys[0]!);
  return path.length > 0 ? path.join(".") : "body";
}

function reasonOf(issue: Issue): string {
  if (issue.code === "unrecognized_keys") return `unknown field${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.join(", ")}`;
  if (issue.code === "invalid_type" && issue.message.includes("received undefined")) return "required";
  return issue.message;
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/** The validator hook of every router: a zod failure becomes 400 VALIDATION_ERROR. */
export function validationHook(result: { success: true } | { success: false; error: ZodError; target?: string }, c: Context): void {
  if (result.success) return;
  if (result.target === "json" && !JSON_TYPE.test(c.req.header("Content-Type") ?? "")) {
    throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "This route takes a JSON body (Content-Type: application/json)", {
      field: "Content-Type",
      reason: "missing",
    });
  }
  const issues = result.error.issues.map((issue) => ({ field: fieldOf(issue), reason: reasonOf(issue) }));
  const first = issues[0] ?? { field: "body", reason: "invalid" };
  throw new ApiError("VALIDATION_ERROR", `Invalid value for ${first.field}: ${first.reason}`, {
    ...first,
    location: result.target ?? "body",
    issues,
  });
}

import { createRoute, z } from "@hono/zod-openapi";
import { ERROR_STATUS, errorDocUrl, type ErrorCode } from "../http/errors";
import { errors, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ERROR_MEANINGS } from "../http/operations";
import { ok } from "../http/respond";
import { router } from "../http/router";

// Every error envelope links here with `docUrl` (issue #32): a code met for the first time is
// explained by the API itself, with no credential, on the deployment that answered.

const app = router();
const tags = ["Errors"];
const CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

const ErrorCodeDoc = z
  .object({
    code: z.enum(CODES),
    status: z.number().int().openapi({ example: 409 }),
    meaning: z.string().openapi({ example: "no ticket can be called" }),
    docUrl: z.string().openapi({ example: "https://api.example.com/v1/errors/QUEUE_EMPTY" }),
  })
  .openapi("ErrorCodeDoc");

function describe(origin: string, code: ErrorCode) {
  return { code, status: ERROR_STATUS[code], meaning: ERROR_MEANINGS[code], docUrl: errorDocUrl(origin, code) };
}

const list = createRoute({
  method: "get",
  path: "/errors",
  tags,
  summary: "Every error code the API answers, with its HTTP status and meaning",
  security: SECURITY.none,
  responses: { 200: jsonResponse(okEnvelope(z.array(ErrorCodeDoc)), "The codes"), ...errors() },
});

app.openapi(list, (c) => {
  const origin = new URL(c.req.url).origin;
  return c.json(ok(CODES.map((code) => describe(origin, code))), 200);
});

const one = createRoute({
  method: "get",
  path: "/errors/{code}",
  tags,
  summary: "One error code: its HTTP status and what it means (the docUrl of every error)",
  security: SECURITY.none,
  request: { params: z.object({ code: z.enum(CODES).openapi({ param: { name: "code", in: "path" }, example: "QUEUE_EMPTY" }) }) },
  responses: { 200: jsonResponse(okEnvelope(ErrorCodeDoc), "The code"), ...errors() },
});

app.openapi(one, (c) => c.json(ok(describe(new URL(c.req.url).origin, c.req.valid("param").code)), 200));

export default app;

import { createRoute, z } from "@hono/zod-openapi";
import { authorize, organizationOfRequest } from "../http/auth";
import { errors, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { iso } from "../lib/time";
import { domainRecord, generateToken, proofInstructions, VERIFICATION_METHODS, verificationStatus, verifyDomain } from "./verification";
import { deps } from "../http/deps";

const app = router();
const tags = ["Domain verification"];
const access = "ORG_MANAGE (owner, admin, or an `admin` key). The organization is the key's, or X-Organization-Id for a session.";

const DomainStatus = z
  .object({
    domain: z.string(),
    status: z.enum(["verified", "pending", "failed"]),
    method: z.enum(VERIFICATION_METHODS),
    verifiedAt: z.string().nullable(),
    lastCheckedAt: z.string().nullable(),
    failureReason: z.string().nullable(),
  })
  .openapi("VerifiedDomain");

const Instructions = z.object({
  dns: z.object({ type: z.literal("TXT"), names: z.array(z.string()), value: z.string() }),
  file: z.object({ url: z.string(), content: z.string() }),
  meta: z.object({ url: z.string(), tag: z.string() }),
});

app.openapi(
  createRoute({
    method: "post",
    path: "/business/verification/generate-token",
    tags,
    summary: "A new verification token for the organization (the previous one stops counting)",
    description: `${access} Place it with one method, then call verify. Verified domains are re-checked daily with the current token.`,
    security: SECURITY.any,
    responses: {
      201: jsonResponse(okEnvelope(z.object({ token: z.string(), createdAt: z.string(), instructions: Instructions })), "Generated"),
      ...errors(),
    },
  }),
  async (c) => {
    const organizationId = await organizationOfRequest(c);
    await authorize(c, organizationId, "ORG_MANAGE");
    const { token, createdAt } = await generateToken(deps(c), organizationId, now());
    return c.json(ok({ token, createdAt: iso(createdAt), instructions: proofInstructions(null, token) }), 201);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: "/business/verification/verify",
    tags,
    summary: "Look for the proof on a domain now",
    description:
      `${access} dns: a TXT record \`service-verification=<token>\` on the domain or on \`_service-verification.<domain>\`; ` +
      "file: `https://<domain>/service-verification.html` containing `service-verification=<token>`; " +
      'meta: `<meta name="service-verification" content="<token>">` in the head of `https://<domain>/`. ' +
      "Answers the domain's state: verified, failed (proof absent, with failureReason) or pending (could not check; retried hourly for 3 days). " +
      "A domain that is not a public host name, or whose page would be fetched from a private address, is 400 VALIDATION_ERROR on `domain`.",
    security: SECURITY.any,
    request: {
      body: jsonBody(
        z
          .strictObject({
            domain: z.string().trim().min(1).max(253).openapi({ example: "shop.example.com" }),
            method: z.enum(VERIFICATION_METHODS),
          })
          .openapi("VerifyDomainRequest"),
      ),
    },
    responses: { 200: jsonResponse(okEnvelope(DomainStatus), "The domain's state after the check"), ...errors() },
  }),
  async (c) => {
    const organizationId = await organizationOfRequest(c);
    await authorize(c, organizationId, "ORG_MANAGE");
    const { domain, method } = c.req.valid("json");
    return c.json(ok(domainRecord(await verifyDomain(deps(c), organizationId, domain, method, now()))), 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/business/verification/status",
    tags,
    summary: "Every domain of the organization with its verification state",
    description: access,
    security: SECURITY.any,
    responses: {
      200: jsonResponse(
        okEnvelope(z.object({ tokenGeneratedAt: z.string().nullable(), verified: z.boolean(), domains: z.array(DomainStatus) })),
        "Verification status",
      ),
      ...errors(),
    },
  }),
  async (c) => {
    const organizationId = await organizationOfRequest(c);
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await verificationStatus(deps(c), organizationId)), 200);
  },
);

export default app;

import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { PHONE_CODE_MAX_ATTEMPTS } from "../domain/phone-codes";
import { requireCredential } from "../http/auth";
import type { AppEnv } from "../http/context";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, optionalJsonBody, SECURITY } from "../http/openapi";
import { authorizeOnQueue, ticketQueueOfCaller } from "../tickets/queue-access";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { phoneVerificationOf, resendPhoneCode, verifyPhoneCode, type CodeTicket } from "./phone-verification";
import { getTicket } from "../tickets/tickets";
import { readVisitorTicket } from "../tickets/visitor-tickets";
import { PhoneVerificationSchema } from "../http/schemas";
import { TICKET_TOKEN_HEADER, withTicketToken } from "../widget/widget.routes";
import { deps } from "../http/deps";

// The visitor gives back the one-time code texted at their join, or asks for a new one
// (docs/limits.md, "SMS and messaging caps": requirePhoneCode). Authorised as the visitor's other
// ticket routes: the ticket's token (`X-Ticket-Token`), the customer who joined (their session),
// or staff with QUEUE_OPERATE verifying for a visitor at the desk.

const app = router();
const tags = ["Tickets"];

const TicketParam = idParam("ticketId", "tkt");
const TokenHeader = z.object({
  [TICKET_TOKEN_HEADER]: z.string().optional().openapi({
    description: "The `ticketToken` the widget join answered (a visitor without an account)",
    example: "q3N8v0c1Zr6mT2yWbE5kH9sJ4dLx7aPfGu0oRiXnYw8A",
  }),
});

const VerificationRecord = PhoneVerificationSchema.extend({ ticketId: z.string() }).openapi("TicketPhoneVerification");

/** The ticket for its token's holder, its customer, or staff allowed to operate its queue. */
async function codeTicketOf(c: Context<AppEnv>, ticketId: string): Promise<CodeTicket> {
  const at = now();
  if (c.req.header(TICKET_TOKEN_HEADER)?.trim()) {
    return withTicketToken(c, ticketId, async (queue, token) => {
      const visitor = await readVisitorTicket(deps(c), queue, ticketId, token, at);
      return visitor && { id: ticketId, organizationId: queue.organizationId, displayCode: visitor.displayCode, queueName: queue.name };
    });
  }
  const principal = requireCredential(c);
  const queue = await ticketQueueOfCaller(c, ticketId);
  const ticket = await getTicket(deps(c), queue, ticketId, at);
  if (principal.kind !== "session" || ticket.userId !== principal.user.id) await authorizeOnQueue(c, queue, "QUEUE_OPERATE");
  return { id: ticket.id, organizationId: ticket.organizationId, displayCode: ticket.displayCode, queueName: queue.name };
}

const read = createRoute({
  method: "get",
  path: "/tickets/{ticketId}/phone-verification",
  tags,
  summary: "Where the ticket's number stands: no code, a code to give back, expired, or verified",
  description:
    "Authorised as POST /v1/tickets/{ticketId}/phone-verification (the ticket's token, the customer who joined, or staff with " +
    "QUEUE_OPERATE). What a status page reads to show the code field while the status is `pending` (or `expired`: offer a new code).",
  security: [...SECURITY.any, {}],
  "x-outside-callers": "the ticket's holder (ticket token)",
  request: { params: TicketParam, headers: TokenHeader },
  responses: { 200: jsonResponse(okEnvelope(VerificationRecord), "The ticket's phone verification"), ...errors() },
});

app.openapi(read, async (c) => {
  const { ticketId } = c.req.valid("param");
  const ticket = await codeTicketOf(c, ticketId);
  return c.json(ok({ ticketId: ticket.id, ...(await phoneVerificationOf(deps(c), ticket.id, now())) }), 200);
});

const verify = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/phone-verification",
  tags,
  summary: "Give back the one-time code texted to the ticket's number",
  description:
    "Where the organization requires it (`requirePhoneCode` on the SMS policy), a join that gives a `phone` texts a 6-digit code " +
    "and nothing else until the code comes back here. With the ticket's token (`X-Ticket-Token`), as the customer who joined, or " +
    "as staff with QUEUE_OPERATE. 200 `verified` (also when it already was). A wrong code is 400 VALIDATION_ERROR naming `code` " +
    `with \`details.attemptsLeft\`; the ${PHONE_CODE_MAX_ATTEMPTS}th wrong code kills it. A code past its 10 minutes or killed is ` +
    "409 INVALID_STATE (`details.status: expired`, `details.reason: expired | too_many_attempts`): ask for a new one with " +
    "…/phone-verification/resend. A ticket with no code (no phone, or none required) is 409 INVALID_STATE (`details.status: none`). " +
    "A wrong or missing token is 404, as for the visitor's other ticket routes.",
  security: [...SECURITY.any, {}],
  "x-outside-callers": "the ticket's holder (ticket token)",
  request: {
    params: TicketParam,
    headers: TokenHeader,
    body: jsonBody(
      z
        .strictObject({
          code: z
            .string()
            .regex(/^\d{6}$/, "the 6 digits of the code, as texted")
            .openapi({ example: "482915", description: "The 6 digits the SMS gave" }),
        })
        .openapi("PhoneVerificationRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(VerificationRecord), "The number is verified"), ...errors(409) },
});

app.openapi(verify, async (c) => {
  const { ticketId } = c.req.valid("param");
  const ticket = await codeTicketOf(c, ticketId);
  const view = await verifyPhoneCode(deps(c), ticket.id, c.req.valid("json").code, now());
  return c.json(ok({ ticketId: ticket.id, ...view }), 200);
});

const resend = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/phone-verification/resend",
  tags,
  summary: "Text a new one-time code to the ticket's number",
  description:
    "Authorised as POST /v1/tickets/{ticketId}/phone-verification. Sends a new code, valid 10 minutes with 5 tries; the previous " +
    "one stops working. Each code is an SMS of the ticket: it counts against the per-ticket cap (`perTicket`, the join's code " +
    "included), the day's ceiling and the month's allowance; past them 429 API_RATE_LIMIT_EXCEEDED with `details.reason` and " +
    "the previous code left as it was. A verified number is answered `verified` and nothing is sent; a ticket with no code is " +
    "409 INVALID_STATE.",
  security: [...SECURITY.any, {}],
  "x-outside-callers": "the ticket's holder (ticket token)",
  request: { params: TicketParam, headers: TokenHeader, body: optionalJsonBody(z.strictObject({}).openapi("PhoneCodeResendRequest")) },
  responses: {
    200: jsonResponse(okEnvelope(VerificationRecord), "A new code was texted (or the number is already verified)"),
    ...errors(409),
  },
});

app.openapi(resend, async (c) => {
  const { ticketId } = c.req.valid("param");
  const ticket = await codeTicketOf(c, ticketId);
  return c.json(ok({ ticketId: ticket.id, ...(await resendPhoneCode(deps(c), ticket, now())) }), 200);
});

export default app;

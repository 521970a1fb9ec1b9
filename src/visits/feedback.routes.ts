import { createRoute, z } from "@hono/zod-openapi";
import { isPublicParagraph, PUBLIC_PARAGRAPH_RULE } from "../domain/public-text";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { TICKET_TOKEN_HEADER, withTicketToken } from "../widget/widget.routes";
import { FEEDBACK_COMMENT_MAX, feedbackRecord, giveVisitorFeedback, visitorFeedbackState } from "./feedback";
import { deps } from "../http/deps";

// The customer's verdict (docs/visits.md, feedback), with the ticket's token, as the visitor's
// other ticket routes: a missing or wrong token is 404. The widget routes' CORS applies.

const app = router();
const tags = ["Widget"];

const TicketParam = idParam("ticketId", "tkt");
const TokenHeader = z.object({
  [TICKET_TOKEN_HEADER]: z
    .string()
    .optional()
    .openapi({ description: "The `ticketToken` the widget join answered", example: "q3N8v0c1Zr6mT2yWbE5kH9sJ4dLx7aPfGu0oRiXnYw8A" }),
});

const Feedback = z
  .object({
    ticketId: z.string(),
    score: z.number().int().min(1).max(5),
    comment: z.string().nullable(),
    channel: z.enum(["widget", "sms"]).openapi({ description: "Where it was given: the status page or widget, or an SMS reply" }),
    servedAt: z.string(),
    createdAt: z.string(),
  })
  .openapi("TicketFeedback");

const FeedbackState = z
  .object({
    status: z.enum(["not_served", "open", "given", "closed"]).openapi({
      description: "not_served: wait for the end of the visit; open: may be given until closesAt; given: once only; closed: too late",
    }),
    servedAt: z.string().nullable(),
    closesAt: z.string().nullable().openapi({ description: "7 days after the service" }),
    feedback: Feedback.nullable(),
  })
  .openapi("TicketFeedbackState");

/** The stored-text rules of a note (CONTRACT §10): no control characters but line breaks, no bidi override. */
const Comment = z
  .string()
  .trim()
  .max(FEEDBACK_COMMENT_MAX)
  .refine((t) => isPublicParagraph(t) && !t.includes("\t"), PUBLIC_PARAGRAPH_RULE);

const FeedbackBody = z
  .strictObject({
    score: z.number().int().min(1).max(5).openapi({ description: "1 (bad) to 5 (excellent)", example: 5 }),
    comment: Comment.nullable()
      .optional()
      .openapi({ description: `At most ${FEEDBACK_COMMENT_MAX} characters; empty means none`, example: "Rapide et aimable." }),
  })
  .openapi("TicketFeedbackRequest");

const give = createRoute({
  method: "post",
  path: "/widget/tickets/{ticketId}/feedback",
  tags,
  summary: "The customer's verdict on their visit: a score 1–5 and an optional comment, once",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token` (it keeps opening this route after the ticket was served). Once the " +
    "ticket is `served` (before: 409 INVALID_STATE), within 7 days of the service (after: 410 FEEDBACK_WINDOW_CLOSED), once per " +
    "ticket (again: 409 FEEDBACK_ALREADY_GIVEN, also after an SMS reply). Raises `ticket.feedback`, and `ticket.feedback_low` for " +
    "a score of 2 or less. A missing or wrong token is 404. See docs/visits.md.",
  security: SECURITY.none,
  request: { params: TicketParam, headers: TokenHeader, body: jsonBody(FeedbackBody) },
  responses: { 201: jsonResponse(okEnvelope(Feedback), "The verdict, recorded"), ...errors(409, 410) },
});

app.openapi(give, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { score, comment } = c.req.valid("json");
  const row = await withTicketToken(c, ticketId, (queue, token) =>
    giveVisitorFeedback(deps(c), queue, ticketId, token, { score, comment: comment ? comment : null }, now()),
  );
  return c.json(ok(feedbackRecord(row)), 201);
});

const read = createRoute({
  method: "get",
  path: "/widget/tickets/{ticketId}/feedback",
  tags,
  summary: "Whether the customer may still give their verdict, and the one given",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token`. What the status page reads to offer the 1–5 after the visit, also when " +
    "opened again from a link once the ticket is served. A missing or wrong token is 404.",
  security: SECURITY.none,
  request: { params: TicketParam, headers: TokenHeader },
  responses: { 200: jsonResponse(okEnvelope(FeedbackState), "The verdict's state"), ...errors() },
});

app.openapi(read, async (c) => {
  const { ticketId } = c.req.valid("param");
  const state = await withTicketToken(c, ticketId, (queue, token) => visitorFeedbackState(deps(c), queue, ticketId, token, now()));
  return c.json(ok(state), 200);
});

export default app;

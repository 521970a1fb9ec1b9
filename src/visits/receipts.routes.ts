import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { notFound } from "../http/errors";
import { errors, idParam, SECURITY } from "../http/openapi";
import { authorizeOnQueue, ticketQueueOfCaller } from "../tickets/queue-access";
import { credentialRefusal, recordFailedCredential } from "../http/rate-limit";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { queueIdOfTicket } from "../lib/ids";
import type { TicketView } from "../tickets/tickets";
import { findQueue } from "../tickets/queues";
import { RECEIPT_PAGE_CSP } from "../domain/receipt";
import { receiptBytes, receiptContent, receiptPage } from "./receipts";
import { getTicket } from "../tickets/tickets";
import { readVisitorTicket, ticketTokenForm } from "../tickets/visitor-tickets";
import { Language } from "../http/schemas";
import { TICKET_TOKEN_HEADER } from "../widget/widget.routes";
import { deps } from "../http/deps";

// A ticket's receipt (docs/receipts.md): ESC/POS for a thermal printer, or an 80 mm HTML page.

const app = router();

const receipt = createRoute({
  method: "get",
  path: "/tickets/{ticketId}/receipt",
  tags: ["Tickets"],
  summary: "The ticket's printed receipt (ESC/POS or 80 mm HTML)",
  description:
    "Readable with the ticket's token (`X-Ticket-Token`, what a kiosk got from the widget join) or by staff with QUEUE_VIEW. " +
    "`format=escpos` (default) answers the bytes a thermal printer takes: initialise, the code centred in double size, " +
    "the service, the location, the time in the location's zone, the visitor's status page as a native QR symbol (`GS ( k`), " +
    "cut. `format=html` answers the same receipt as a page sized for 80 mm paper. The status page's QR (`/t/{ticketId}#token=…`) " +
    "is printed only when the token is sent: the server keeps only its hash. A wrong token is 404 and counts as a wrong credential.",
  security: [...SECURITY.any, {}],
  "x-outside-callers": "the ticket's holder (ticket token)",
  request: {
    params: idParam("ticketId", "tkt"),
    query: z.object({
      format: z.enum(["escpos", "html"]).default("escpos").openapi({ description: "escpos (default) or html" }),
      language: Language.default("en").openapi({ description: "The receipt's language, a language of the catalogue (default en)" }),
    }),
    headers: z.object({
      [TICKET_TOKEN_HEADER]: z
        .string()
        .optional()
        .openapi({ description: "The `ticketToken` the widget join answered", example: "q3N8v0c1Zr6mT2yWbE5kH9sJ4dLx7aPfGu0oRiXnYw8A" }),
    }),
  },
  responses: {
    200: {
      description: "The receipt",
      content: {
        "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) },
        "text/html": { schema: z.string() },
      },
    },
    ...errors(),
  },
});

/** The ticket for its token's holder (the status page's token then goes on the receipt), else for staff. */
async function readableTicket(c: Context<AppEnv>, ticketId: string, at: number): Promise<{ ticket: TicketView; token: string | null }> {
  const token = c.req.header(TICKET_TOKEN_HEADER)?.trim();
  if (token) {
    // As the widget's token routes judge a token: one we did not sign is refused on the spot;
    // only the unsigned format handed before is looked up behind the failed-credential limit.
    const queueId = queueIdOfTicket(ticketId);
    const form = queueId ? await ticketTokenForm(deps(c), token) : "forged";
    if (form === "forged" || !queueId) throw notFound("Ticket");
    if (form === "legacy") {
      const refused = await credentialRefusal(c);
      if (refused) throw refused;
    }
    const queue = await findQueue(deps(c), queueId).catch(() => null);
    const visitor = queue ? await readVisitorTicket(deps(c), queue, ticketId, token, at) : null;
    if (!queue || !visitor) {
      if (form === "legacy") await recordFailedCredential(c);
      throw notFound("Ticket");
    }
    return { ticket: await getTicket(deps(c), queue, ticketId, at), token };
  }
  const queue = await ticketQueueOfCaller(c, ticketId);
  await authorizeOnQueue(c, queue, "QUEUE_VIEW");
  return { ticket: await getTicket(deps(c), queue, ticketId, at), token: null };
}

/** Where the visitor's status page is served (the public address when configured, else this request's). */
function statusPageUrl(c: Context<AppEnv>, ticketId: string, token: string): string {
  const base = (c.env.PUBLIC_BASE_URL ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  return `${base}/t/${encodeURIComponent(ticketId)}#token=${encodeURIComponent(token)}`;
}

app.openapi(receipt, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { format, language } = c.req.valid("query");
  const { ticket, token } = await readableTicket(c, ticketId, now());
  const content = await receiptContent(deps(c), ticket, token ? statusPageUrl(c, ticket.id, token) : null, language);
  if (format === "html") {
    return c.body(receiptPage(content), 200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": RECEIPT_PAGE_CSP });
  }
  const bytes = receiptBytes(content);
  return c.body(bytes.buffer as ArrayBuffer, 200, {
    "Content-Type": "application/octet-stream",
    "Content-Disposition": `inline; filename="ticket-${ticket.displayCode}.bin"`,
  });
});

export default app;

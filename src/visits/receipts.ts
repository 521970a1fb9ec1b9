import { asc, eq } from "drizzle-orm";
import { locations, organizations, serviceLocations, services } from "../db/schema";
import { escposReceipt, htmlReceipt, receiptTime, type ReceiptContent, type ReceiptLanguage } from "../domain/receipt";
import type { TicketView } from "../queue-room/contract";
import { qrSvg } from "../entry/qr-images";
import type { Deps } from "../http/deps";

// A ticket's receipt (docs/receipts.md): what it prints is looked up here, the bytes and the
// page are made by domain/receipt.ts.

/** Pixels of the SVG's own size; the page scales it to 40 mm. */
const RECEIPT_QR_PIXELS = 400;

/** The organization, the service and the service's first location (its name and time zone). */
async function receiptFacts({ db }: Deps, ticket: TicketView) {
  const [org, service, place] = await Promise.all([
    db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, ticket.organizationId)).get(),
    db.select({ name: services.name }).from(services).where(eq(services.id, ticket.serviceId)).get(),
    db
      .select({ name: locations.name, timezone: locations.timezone })
      .from(serviceLocations)
      .innerJoin(locations, eq(locations.id, serviceLocations.locationId))
      .where(eq(serviceLocations.serviceId, ticket.serviceId))
      .orderBy(asc(locations.createdAt), asc(locations.id))
      .get(),
  ]);
  return { organizationName: org?.name ?? "", serviceName: service?.name ?? "", location: place ?? null };
}

export async function receiptContent(
  deps: Deps,
  ticket: TicketView,
  statusUrl: string | null,
  language: ReceiptLanguage,
): Promise<ReceiptContent> {
  const facts = await receiptFacts(deps, ticket);
  return {
    displayCode: ticket.displayCode,
    organizationName: facts.organizationName,
    serviceName: facts.serviceName,
    locationName: facts.location?.name ?? null,
    issuedAt: receiptTime(ticket.createdAt, facts.location?.timezone ?? "UTC", language),
    statusUrl,
    language,
  };
}

export function receiptBytes(content: ReceiptContent): Uint8Array {
  return escposReceipt(content);
}

export function receiptPage(content: ReceiptContent): string {
  return htmlReceipt(content, content.statusUrl ? qrSvg(content.statusUrl, RECEIPT_QR_PIXELS) : null);
}

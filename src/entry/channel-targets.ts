import { eq } from "drizzle-orm";
import { queues, services } from "../db/schema";
import { invalidState, notFound } from "../http/errors";
import type { Deps } from "../http/deps";

// The catalog rows a QR code or an NFC tag points at. Unknown ids are 404; the caller then
// authorizes on the returned organization (another organization's ids are 404 as well).

export interface QueueTarget {
  id: string;
  organizationId: string;
  serviceId: string;
  archivedAt: number | null;
}

export async function queueTarget({ db }: Deps, queueId: string): Promise<QueueTarget> {
  const row = await db
    .select({ id: queues.id, organizationId: queues.organizationId, serviceId: queues.serviceId, archivedAt: queues.archivedAt })
    .from(queues)
    .where(eq(queues.id, queueId))
    .get();
  if (!row) throw notFound("Queue");
  return row;
}

/**
 * An archived queue takes no tickets any more, so no new way in may point at it. Checked
 * after authorization, so another organization's archived queue is still a plain 404.
 */
export function assertNotArchived(queue: QueueTarget): void {
  if (queue.archivedAt !== null) throw invalidState("archived", ["active", "paused", "closed"], "This queue is archived");
}

export async function serviceTarget({ db }: Deps, serviceId: string): Promise<{ id: string; organizationId: string }> {
  const row = await db
    .select({ id: services.id, organizationId: services.organizationId })
    .from(services)
    .where(eq(services.id, serviceId))
    .get();
  if (!row) throw notFound("Service");
  return row;
}

import { rulesChanged } from "./room-rules";
import { eq } from "drizzle-orm";
import { queues, serviceIntake } from "../db/schema";
import {
  checkEdit,
  checkJoinAnswers,
  definitionIssues,
  type IntakeField,
  type IntakeIssue,
  type IntakeValue,
  type SplitAnswers,
} from "../domain/intake";
import { ApiError, notFound } from "../http/errors";
import { iso } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import type { QueueRow } from "../http/credentials/queues";
import { inRoom } from "./queue-rooms";
import { findService, type ServiceRow } from "../catalog/services";
import { type Deps } from "../http/deps";

// Intake questions (docs/visits.md). The definition lives in D1 per service; the answers live
// on the ticket's row in its room, the single writer of a ticket, and reach D1 through the
// room's projection like every other ticket field. That way an answer is never ahead of or
// behind its ticket (a join refused by the room leaves no orphan answers; a transfer or a
// recovery carries them in the same transaction), and the Worker's reads of D1 see them with
// the ticket's own version guard. The Worker checks the answers against the definition before
// asking the room: the room holds no catalog, and the check needs nothing the room owns.

export type IntakeRow = typeof serviceIntake.$inferSelect;

/** The service and its organization, or 404 (routes then check the caller's permission there). */
export async function serviceForIntake(deps: Deps, serviceId: string): Promise<ServiceRow> {
  const row = await findService(deps, serviceId);
  if (!row) throw notFound("Service");
  return row;
}

export async function intakeFields({ db }: Deps, serviceId: string): Promise<IntakeField[]> {
  const row = await db.select({ fields: serviceIntake.fields }).from(serviceIntake).where(eq(serviceIntake.serviceId, serviceId)).get();
  return row?.fields ?? [];
}

export function intakeRecord(serviceId: string, fields: IntakeField[], updatedAt: number | null) {
  return { serviceId, fields, updatedAt: updatedAt === null ? null : iso(updatedAt) };
}

export async function getIntake({ db }: Deps, service: ServiceRow) {
  const row = await db.select().from(serviceIntake).where(eq(serviceIntake.serviceId, service.id)).get();
  return intakeRecord(service.id, row?.fields ?? [], row?.updatedAt ?? null);
}

/** Replaces the questions. Answers already given stay on their tickets as they were. */
export async function putIntake(deps: Deps, service: ServiceRow, fields: IntakeField[], at: number) {
  const { db } = deps;
  refuseIssues(definitionIssues(fields));
  const row: IntakeRow = { serviceId: service.id, organizationId: service.organizationId, fields, updatedAt: at };
  // The service's queues learn how many questions it asks in the same batch.
  await db.batch([
    db
      .insert(serviceIntake)
      .values(row)
      .onConflictDoUpdate({ target: serviceIntake.serviceId, set: { fields, updatedAt: at } }),
    db.update(queues).set({ intakeQuestions: fields.length }).where(eq(queues.serviceId, service.id)),
  ]);
  // A join may be judged on a queue row the Worker kept (docs/hot-path.md): the new rules version
  // makes the service's rooms refuse a row read before this change, which is then read again.
  await rulesChanged(deps, service.organizationId, at, { serviceId: service.id });
  return intakeRecord(service.id, fields, at);
}

/** One 400 naming the first wrong field (`intake.<key>`), every wrong field in `details.issues`. */
function refuseIssues(issues: readonly IntakeIssue[]): void {
  const first = issues[0];
  if (first === undefined) return;
  throw new ApiError("VALIDATION_ERROR", `Invalid value for ${first.field}: ${first.reason}`, {
    field: first.field,
    reason: first.reason,
    issues: issues.map((i) => ({ field: i.field, reason: i.reason })),
  });
}

/**
 * The answers a join carries, checked against the service's questions (every entry channel
 * comes through here, by issueTicket, which every channel reaches through ./joins.ts). A channel that cannot ask (a QR or NFC scan) gives none:
 * a service with an `at_join` question then refuses it, naming the question.
 */
export async function answersAtJoin(
  deps: Deps,
  queue: QueueRow,
  given: Record<string, IntakeValue | null> | undefined,
): Promise<SplitAnswers> {
  // The queue row says whether its service asks anything: a service without questions costs
  // its joins no read (the join's hot path); answers given to it are refused as unknown keys.
  const fields = queue.intakeQuestions > 0 ? await intakeFields(deps, queue.serviceId) : [];
  if (fields.length === 0 && (given === undefined || Object.keys(given).length === 0)) return { open: null, personal: null };
  const checked = checkJoinAnswers(fields, given ?? {});
  if (!checked.ok) {
    refuseIssues(checked.issues);
    throw new Error("unreachable");
  }
  return checked.value;
}

/**
 * The keys of the service's `at_serve` questions: the room refuses to start serving or complete a
 * ticket while one has no answer (docs/visits.md). A service without questions costs no read.
 */
export async function answersNeededToServe(deps: Deps, queue: QueueRow): Promise<string[]> {
  if (queue.intakeQuestions === 0) return [];
  return (await intakeFields(deps, queue.serviceId)).filter((f) => f.required === "at_serve").map((f) => f.key);
}

/** Staff change answers (null clears one); the room writes them on the ticket. */
export async function editAnswers(
  deps: Deps,
  queue: QueueRow,
  ticket: TicketView,
  changes: Record<string, IntakeValue | null>,
  at: number,
): Promise<TicketView> {
  const fields = await intakeFields(deps, queue.serviceId);
  const checked = checkEdit(fields, ticket.intake, changes);
  if (!checked.ok) {
    refuseIssues(checked.issues);
    throw new Error("unreachable");
  }
  const { open, personal } = checked.value;
  return inRoom(deps, queue, (room) =>
    room.command({ verb: "setIntake", ticketId: ticket.id, intake: open, intakePersonal: personal, at }),
  );
}

import type { Cell, TicketFields, TicketRow } from "./rows";
import { FINISHED_STATUSES } from "./archive";
import type { SubjectErasure, SubjectMatch, SubjectTicket } from "./types";

// A person's data on request (docs/personal-data.md), as far as a room holds it: the tickets
// the person has here (by their phone, their account, or a ticket the Worker found for them,
// an appointment's check-in), with the remote-join location beside them. The room is the
// single writer of its tickets, so erasure happens here, in one storage transaction, and the
// drain then projects the anonymised rows to D1.

/** The user id an erased ticket keeps: no account is linked to it any more. */
export const ERASED_USER = "(anonymised)";

type RemoteRow = { latitude: number | null; longitude: number | null; accuracy_m: number | null; last_location_at: number };

function matching(sql: SqlStorage, match: SubjectMatch): TicketRow[] {
  const clauses: string[] = [];
  const params: Cell[] = [];
  const add = (column: string, values: string[]) => {
    if (values.length === 0) return;
    clauses.push(`${column} IN (${values.map(() => "?").join(", ")})`);
    params.push(...values);
  };
  add("phone", match.phones);
  add("user_id", match.userIds);
  add("id", match.ticketIds);
  if (clauses.length === 0) return [];
  return sql.exec<TicketRow>(`SELECT * FROM tickets WHERE ${clauses.join(" OR ")} ORDER BY number`, ...params).toArray();
}

export function subjectTickets(sql: SqlStorage, match: SubjectMatch): SubjectTicket[] {
  return matching(sql, match).map((row) => {
    const remote = sql
      .exec<RemoteRow>("SELECT latitude, longitude, accuracy_m, last_location_at FROM remote_joins WHERE ticket_id = ?", row.id)
      .toArray()[0];
    return {
      id: row.id,
      number: row.number,
      status: row.status,
      source: row.source,
      userId: row.user_id,
      visitorName: row.visitor_name,
      phone: row.phone,
      language: row.language,
      partySize: row.party_size,
      intake: row.intake,
      intakePersonal: row.intake_personal,
      labels: row.labels,
      outcome: row.outcome,
      note: row.note,
      holdReason: row.hold_reason,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      remoteJoin: remote
        ? { latitude: remote.latitude, longitude: remote.longitude, accuracyM: remote.accuracy_m, lastLocationAt: remote.last_location_at }
        : null,
    };
  });
}

const FINISHED: readonly string[] = FINISHED_STATUSES;

/**
 * Anonymises the person's finished tickets here: their name, number, account link, personal
 * intake answers and the staff's free text go (the open answers, labels, outcome, times and
 * statuses stay, so every count stays the same). Events not delivered yet lose the number, so
 * no text goes to it. A ticket still in the line refuses the whole erasure (the caller cancels
 * it first). Running it again changes nothing.
 */
export function eraseSubject(sql: SqlStorage, match: SubjectMatch, update: (id: string, fields: TicketFields) => void): SubjectErasure {
  const rows = matching(sql, match);
  const live = rows.filter((r) => !FINISHED.includes(r.status)).map((r) => ({ id: r.id, status: r.status }));
  if (live.length > 0) return { erased: 0, live };
  let erased = 0;
  for (const row of rows) {
    const personal =
      row.visitor_name !== null ||
      row.phone !== null ||
      row.intake_personal !== null ||
      row.note !== null ||
      row.hold_reason !== null ||
      row.user_id !== ERASED_USER;
    if (personal) {
      update(row.id, { visitor_name: null, phone: null, intake_personal: null, note: null, hold_reason: null, user_id: ERASED_USER });
      erased += 1;
    }
    sql.exec("UPDATE remote_joins SET latitude = NULL, longitude = NULL, accuracy_m = NULL, distance_m = NULL WHERE ticket_id = ?", row.id);
    sql.exec("DELETE FROM ticket_pushes WHERE ticket_id = ?", row.id);
    sql.exec("UPDATE outbox SET message = json_set(message, '$.data.phone', NULL) WHERE ticket_id = ?", row.id);
  }
  return { erased, live: [] };
}

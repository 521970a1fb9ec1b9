// Domain events: every state change of a queue is one of these, written to the room's outbox
// in the same storage transaction as the change, then delivered at least once.

export const EVENT_TYPES = [
  "ticket.created",
  "ticket.almost_called",
  "ticket.called",
  "ticket.serving",
  "ticket.served",
  "ticket.cancelled",
  "ticket.skipped",
  "ticket.transferred",
  "ticket.expired",
  "ticket.no_show",
  "ticket.recovered",
  "ticket.auto_skipped",
  "ticket.assigned",
  "ticket.present",
  "ticket.recalled",
  "ticket.returned",
  "ticket.held",
  "ticket.resumed",
  "ticket.stepped_back",
  "ticket.deferred",
  "review.request",
  "inactivity.warning",
  "remote_join.arrived",
  "remote_join.expired",
  "queue.status_changed",
  "queue.updated",
  "queue.capacity_warning",
  "queue.long_wait",
  "queue.cleared",
  "queue.archived",
  "member.joined",
  // Visits (docs/visits.md)
  "ticket.intake_updated",
  "ticket.label_added",
  "ticket.label_removed",
  // The console's "mark VIP" (issue 27): a waiting ticket moved into the priority lane.
  "ticket.prioritized",
  "ticket.priority_removed",
  // Several services in one visit (docs/visits.md): a leg was completed and the visitor waits in the next.
  "ticket.route_advanced",
  // Appointments (docs/appointments.md).
  "appointment.created",
  "appointment.rescheduled",
  "appointment.cancelled",
  // Appointments blended with walk-ins (docs/blend.md).
  "appointment.checked_in",
  "appointment.no_show",
  // The customer's verdict (docs/visits.md, feedback): every one, and those at or under the low mark.
  "ticket.feedback",
  "ticket.feedback_low",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(type: string): type is EventType {
  return EVENT_TYPES.some((t) => t === type);
}

/** What travels on the EVENTS queue; `id` (evt_…) de-duplicates deliveries. */
export interface DomainEventMessage {
  id: string;
  type: EventType;
  organizationId: string;
  queueId: string | null;
  ticketId: string | null;
  occurredAt: string;
  data: Record<string, unknown>;
}

import type { Env } from "../env";

// Where the queue engine asks the calendar whether someone may act now. The calendar issue
// fills these in (breaks, closures and unavailability events, CONTRACT §6); until then nobody
// is ever unavailable and no service is ever closed by the calendar.

export interface OperatorBlock {
  eventId: string;
  /** Epoch ms when the blocking occurrence ends. */
  until: number;
}

export interface ServiceClosure {
  eventId: string;
  until: number;
}

/** The break, closure or unavailability that keeps this operator from calling now, if any. */
export async function operatorBlock(_env: Env, _organizationId: string, _userId: string, _at: number): Promise<OperatorBlock | null> {
  return null;
}

/** The closure that keeps this service from taking tickets now, if any. */
export async function serviceClosure(_env: Env, _organizationId: string, _serviceId: string, _at: number): Promise<ServiceClosure | null> {
  return null;
}

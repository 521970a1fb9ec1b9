// How a queue's room blends checked-in appointments with walk-ins (docs/appointments.md).

/** A queue's blend policy; every knob has a documented default. */
export interface BlendPolicy {
  /** A checked-in appointment goes ahead of walk-ins from this many minutes before its time. */
  appointmentsFirstFromMinutes: number;
  /** …unless a walk-in has waited this long: then the walk-in goes first. */
  walkInMaxWaitMinutes: number;
}

export const DEFAULT_BLEND: BlendPolicy = { appointmentsFirstFromMinutes: 5, walkInMaxWaitMinutes: 30 };

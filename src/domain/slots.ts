// A service's bookable time (docs/appointments.md).

export interface BookingSettings {
  enabled: boolean;
  durationMinutes: number;
  slotStepMinutes: number;
  capacityPerSlot: number;
  leadTimeMinutes: number;
  horizonDays: number;
  checkInOpensMinutes: number;
  lateGraceMinutes: number;
  lateBecomes: "walk_in" | "no_show";
}

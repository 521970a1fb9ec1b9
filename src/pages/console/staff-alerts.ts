// The staff alert for this desk (docs/floor.md): the location's floor (GET /v1/locations/{locationId}/floor,
// operators may read it) says which visitors have waited their queue's target while an open desk
// calling from that queue is idle; the console keeps those naming its own desk. Read again after
// each read of the desk (so on each live signal and after each verb) and every 15 s, since time
// passing announces nothing. A failed read keeps the last alerts and is answered as `error`, which the
// console shows above them (they may be out of date), with `retry`.
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { get, type Answer } from "./client";

export type StaffAlert = Answer<"/v1/locations/{locationId}/floor">["alerts"][number];

export function useStaffAlerts(
  desk: { id: string; locationId: string } | null,
  signal: unknown,
): { alerts: StaffAlert[]; error: unknown; retry: () => void } {
  const [alerts, setAlerts] = useState<StaffAlert[]>([]);
  const [error, setError] = useState<unknown>(null);
  const state = useRef({ deskId: null as string | null, reading: false });
  state.current.deskId = desk?.id ?? null;

  const read = async () => {
    if (!desk || state.current.reading) return;
    state.current.reading = true;
    try {
      const floor = await get("/v1/locations/{locationId}/floor", { locationId: desk.locationId });
      if (state.current.deskId === desk.id) {
        setAlerts(floor.alerts.filter((a) => a.idleDesks.some((d) => d.id === desk.id)));
        setError(null);
      }
    } catch (err) {
      if (state.current.deskId === desk.id) setError(err);
    } finally {
      state.current.reading = false;
    }
  };

  useEffect(() => {
    if (!desk) {
      setAlerts([]);
      setError(null);
      return;
    }
    const timer = setInterval(() => void read(), 15_000);
    return () => clearInterval(timer);
  }, [desk?.id]);

  useEffect(() => {
    void read();
  }, [desk?.id, signal]);

  return { alerts, error, retry: () => void read() };
}

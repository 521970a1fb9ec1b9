// The desk's live view: one read (GET /v1/desks/{deskId}/console) per live signal of the desk's
// queues (docs/pages.md). One read at a time; a signal arriving meanwhile asks for one more after
// it. A failed read is kept as the error to show, with the last good view left on screen.
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { openLive, type LiveState } from "../shared/live";
import { get, type Answer } from "./client";

export type DeskView = Answer<"/v1/desks/{deskId}/console">;
export type Ticket = DeskView["waiting"][number];

export function useDeskView(
  desk: { id: string; queueIds: string[] } | null,
  on: { reconnected: () => void; offline: () => void },
): { view: DeskView | null; error: unknown; live: LiveState; refresh: () => Promise<void> } {
  const [view, setView] = useState<DeskView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState<LiveState>("connecting");
  const state = useRef({ deskId: null as string | null, reading: false, again: false });
  state.current.deskId = desk?.id ?? null;

  const refresh = async (): Promise<void> => {
    const deskId = state.current.deskId;
    if (!deskId) return;
    if (state.current.reading) {
      state.current.again = true;
      return;
    }
    state.current.reading = true;
    try {
      const read = await get("/v1/desks/{deskId}/console", { deskId });
      if (state.current.deskId === deskId) {
        setView(read);
        setError(null);
      }
    } catch (err) {
      setError(err);
    } finally {
      state.current.reading = false;
      if (state.current.again) {
        state.current.again = false;
        void refresh();
      }
    }
  };

  useEffect(() => {
    if (!desk) {
      setView(null);
      return;
    }
    const channel = openLive({
      subscriptions: () => desk.queueIds.map((queueId) => ({ action: "subscribe", queueId })),
      onMessage: (m) => {
        if (m.type === "queue_update") void refresh();
      },
      onOpen: (reconnected) => {
        void refresh();
        if (reconnected) on.reconnected();
      },
      onState: (s) => {
        setLive(s);
        if (s === "offline") on.offline();
      },
    });
    return () => channel.close();
  }, [desk?.id]);

  return { view, error, live, refresh };
}

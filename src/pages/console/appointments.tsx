// The branch's appointments of the day (GET /v1/locations/{locationId}/appointments, today where the
// branch is) with a check-in button for a booked one (POST /v1/appointments/{id}/check-in by staff):
// the customer's ticket joins the line marked as an appointment. Read when the desk opens, after a
// check-in and after a reconnection (not on every signal of the queues). A failed read is shown.
import { useEffect, useState } from "hono/jsx/dom";
import type { PageLang } from "../shared/i18n";
import { get, post, type Answer } from "./client";
import type { ConsoleText } from "./i18n";
import { clockTime } from "./marks";
import { refusalText } from "./refusal";

type Appointment = Answer<"/v1/locations/{locationId}/appointments">[number];

export function DayAppointments(p: {
  locationId: string;
  timeZone: string | undefined;
  t: ConsoleText;
  lang: PageLang;
  /** Changes when the list should be read again (a reconnection). */
  generation: number;
  onCheckedIn: (text: string) => void;
}) {
  const { t, lang } = p;
  const [list, setList] = useState<Appointment[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = async () => {
    try {
      setList(await get("/v1/locations/{locationId}/appointments", { locationId: p.locationId }, {}));
      setError(null);
    } catch (err) {
      setError(t.appointmentsFailed(refusalText(err, lang)));
    }
  };
  useEffect(() => {
    void load();
  }, [p.locationId, p.generation]);

  const checkIn = async (a: Appointment) => {
    setBusy(a.id);
    try {
      const done = await post("/v1/appointments/{appointmentId}/check-in", { appointmentId: a.id });
      p.onCheckedIn(t.checkedIn(a.customer.name, done.ticket.displayCode));
      setError(null);
    } catch (err) {
      setError(refusalText(err, lang));
    } finally {
      setBusy(null);
      await load();
    }
  };

  return (
    <section class="appointments card" aria-labelledby="appointments-title">
      <h2 id="appointments-title">
        {t.appointments} <span class="count">{list?.filter((a) => a.status !== "cancelled").length ?? 0}</span>
      </h2>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      {list && list.length === 0 && <p class="muted">{t.noAppointments}</p>}
      {list && list.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">{t.time}</th>
              <th scope="col">{t.customer}</th>
              <th scope="col">{t.status}</th>
              <th scope="col">
                <span class="sr-only">{t.actions}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((a) => (
              <tr data-appointment={a.id} class={a.status === "cancelled" ? "cancelled" : ""}>
                <td>{clockTime(a.start, lang, p.timeZone)}</td>
                <td>{a.customer.name}</td>
                <td>{t.appointmentStatus[a.status]}</td>
                <td class="row-actions">
                  {a.status === "booked" && (
                    <button
                      type="button"
                      class="small"
                      disabled={busy !== null}
                      onClick={() => checkIn(a)}
                      aria-label={t.checkInFor(a.customer.name, clockTime(a.start, lang, p.timeZone))}
                    >
                      {t.checkIn}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

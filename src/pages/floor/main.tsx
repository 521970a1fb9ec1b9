// The floor view (/console/floor), for managers: per desk the operator, the ticket being served
// and for how long; per queue the waiting count, longest wait, held tickets and served today.
// From GET /v1/locations/{locationId}/floor; live: a queue_update of any of the location's
// queues is the signal to read the floor again.
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "./floor.css";
import { api, ApiRefusal, defaultHeaders, type Location, type Membership, type Schemas, type User } from "../shared/api";
import { browserLang, minutes, rememberLang, since, type Lang } from "../shared/i18n";
import { openLive, type LiveState } from "../shared/live";

// GET /v1/locations/{locationId}/floor (src/desks/floor.routes.ts).
type Floor = Schemas["Floor"];

const TEXT = {
  en: {
    title: "Floor",
    console: "Counter console",
    desks: "Desks",
    queues: "Queues",
    desk: "Desk",
    operator: "Operator",
    serving: "Current ticket",
    forHowLong: "For",
    closed: "closed",
    idle: "no customer",
    queue: "Queue",
    waiting: "Waiting",
    longest: "Longest wait",
    held: "On hold",
    servedToday: "Served today",
    location: "Location",
    signIn: "Sign in at the counter console first.",
    noRoute: "The floor is not available on this server yet.",
    updated: "Updated",
    reconnecting: "Connection lost — reconnecting…",
    live: "Live",
    language: "Français",
    statusNames: { called: "called", serving: "being served", held: "on hold" } as Record<string, string>,
  },
  fr: {
    title: "Vue de l'agence",
    console: "Console du guichet",
    desks: "Guichets",
    queues: "Files",
    desk: "Guichet",
    operator: "Agent",
    serving: "Ticket en cours",
    forHowLong: "Depuis",
    closed: "fermé",
    idle: "aucun client",
    queue: "File",
    waiting: "En attente",
    longest: "Attente la plus longue",
    held: "En suspens",
    servedToday: "Servis aujourd'hui",
    location: "Agence",
    signIn: "Connectez-vous d'abord à la console du guichet.",
    noRoute: "La vue de l'agence n'est pas encore disponible sur ce serveur.",
    updated: "Mis à jour",
    reconnecting: "Connexion perdue — reconnexion…",
    live: "En direct",
    language: "English",
    statusNames: { called: "appelé", serving: "en cours", held: "en suspens" } as Record<string, string>,
  },
};

function App() {
  const [lang, setLang] = useState<Lang>(browserLang());
  const t = TEXT[lang];
  const [locations, setLocations] = useState<Location[]>([]);
  const [locationId, setLocationId] = useState("");
  const [floor, setFloor] = useState<Floor | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState<LiveState>("connecting");
  const [clock, setClock] = useState(Date.now());
  const reading = useRef({ busy: false, again: false, locationId: "" });

  const read = async () => {
    const loc = reading.current.locationId;
    if (!loc) return;
    if (reading.current.busy) {
      reading.current.again = true;
      return;
    }
    reading.current.busy = true;
    try {
      setFloor(await api<Floor>("GET", `/locations/${loc}/floor`));
      setError(null);
    } catch (err) {
      setError(
        err instanceof ApiRefusal && err.status === 404 && err.message.startsWith("No route")
          ? TEXT[lang].noRoute
          : String((err as Error).message),
      );
    } finally {
      reading.current.busy = false;
      if (reading.current.again) {
        reading.current.again = false;
        void read();
      }
    }
  };

  useEffect(() => {
    (async () => {
      try {
        const me = await api<{ user: User; memberships: Membership[] }>("GET", "/auth/me");
        const chosen = me.user.language === "fr" ? "fr" : "en";
        setLang(chosen);
        rememberLang(chosen);
        if (me.memberships[0]) defaultHeaders["X-Organization-Id"] = me.memberships[0].organizationId;
        const locs = await api<Location[]>("GET", "/business/locations?limit=100");
        setLocations(locs);
        const first = new URLSearchParams(location.search).get("location") ?? locs[0]?.id ?? "";
        reading.current.locationId = first;
        setLocationId(first);
        await read();
      } catch (err) {
        setError(err instanceof ApiRefusal && err.status === 401 ? TEXT[lang].signIn : String((err as Error).message));
      }
    })();
    const timer = setInterval(() => setClock(Date.now()), 10_000);
    return () => clearInterval(timer);
  }, []);

  const queueIds = floor?.queues.map((q) => q.id).join(",") ?? "";
  useEffect(() => {
    if (!queueIds) return;
    const channel = openLive({
      subscriptions: () => queueIds.split(",").map((queueId) => ({ action: "subscribe", queueId })),
      onMessage: (m) => m.type === "queue_update" && void read(),
      onOpen: () => void read(),
      onState: setLive,
    });
    return () => channel.close();
  }, [queueIds]);

  const switchLang = () => {
    const next: Lang = lang === "fr" ? "en" : "fr";
    setLang(next);
    rememberLang(next);
  };

  return (
    <div>
      <header class="bar">
        <h1>{t.title}</h1>
        <span class="spacer" />
        {floor && (
          <span class={`live ${live === "offline" ? "offline" : ""}`} role="status">
            {live === "offline" ? t.reconnecting : t.live}
          </span>
        )}
        <a class="barlink" href="/console">
          {t.console}
        </a>
        <button type="button" onClick={switchLang} lang={lang === "fr" ? "en" : "fr"}>
          {t.language}
        </button>
      </header>
      <div class="floor">
        {locations.length > 1 && (
          <label class="pick-location">
            {t.location}
            <select
              value={locationId}
              onChange={(e: Event) => {
                const id = (e.target as HTMLSelectElement).value;
                reading.current.locationId = id;
                setLocationId(id);
                void read();
              }}
            >
              {locations.map((l) => (
                <option value={l.id}>{l.name}</option>
              ))}
            </select>
          </label>
        )}
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        {floor && (
          <>
            <section class="card" aria-labelledby="desks-title">
              <h2 id="desks-title">{t.desks}</h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t.desk}</th>
                    <th scope="col">{t.operator}</th>
                    <th scope="col">{t.serving}</th>
                    <th scope="col">{t.forHowLong}</th>
                  </tr>
                </thead>
                <tbody>
                  {floor.desks.map((d) => (
                    <tr class={d.status === "closed" ? "closed" : ""}>
                      <th scope="row">{d.name}</th>
                      <td>{d.status === "closed" ? t.closed : (d.operator?.name ?? "—")}</td>
                      <td>
                        {d.current
                          ? `${d.current.displayCode} · ${t.statusNames[d.current.status] ?? d.current.status}`
                          : d.status === "open"
                            ? t.idle
                            : "—"}
                      </td>
                      <td>{d.current ? minutes(since(d.current.since, clock), lang) : "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
            <section class="card" aria-labelledby="queues-title">
              <h2 id="queues-title">{t.queues}</h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t.queue}</th>
                    <th scope="col">{t.waiting}</th>
                    <th scope="col">{t.longest}</th>
                    <th scope="col">{t.held}</th>
                    <th scope="col">{t.servedToday}</th>
                  </tr>
                </thead>
                <tbody>
                  {floor.queues.map((q) => (
                    <tr>
                      <th scope="row">
                        <span class="letter">{q.letter}</span> {q.name}
                      </th>
                      <td>{q.waitingCount}</td>
                      <td>{q.waitingCount > 0 ? minutes(q.longestWaitSeconds / 60, lang) : "—"}</td>
                      <td>{q.heldCount}</td>
                      <td>{q.servedToday}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          </>
        )}
      </div>
    </div>
  );
}

render(<App />, document.getElementById("app")!);

// The counter console (/console): sign in, take a desk, then work its queues from the keyboard.
// Live: the widget socket signals a change of any of the desk's queues and the console reads its
// desk again in one request (GET /v1/desks/{deskId}/console, ./desk-view.ts); no polling, no reload.
// This file holds who is signed in, which desk, and the verbs; each view is its own module.
import { render, useEffect, useLayoutEffect, useRef, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "./console.css";
import { ApiRefusal, defaultHeaders, type Schemas, type ServiceOutcome } from "../shared/api";
import { allPageLangs, rememberLang, showLang, signedInLang, staffPageLang, type PageLang } from "../shared/i18n";
import { LanguageSelect } from "../shared/language-switch";
import { joinRefusal } from "../shared/refusals";
import { DayAppointments } from "./appointments";
import { DeskBanners } from "./banners";
import { del, get, patch, post, type Answer } from "./client";
import { CurrentCard } from "./current-card";
import { Conversation } from "./conversation";
import { useDeskView, type Ticket } from "./desk-view";
import { DialogView, type Dialog } from "./dialogs";
import { missingKeys } from "./intake-ask";
import { TEXT } from "./i18n";
import { HeldList, WaitingLine } from "./line";
import { refusalText } from "./refusal";
import { SignIn } from "./sign-in";
import { useStaffAlerts } from "./staff-alerts";

type Me = Answer<"/v1/auth/me">;
type Desk = Answer<"/v1/desks/{deskId}">;
type Location = Answer<"/v1/business/locations">[number];
type Queue = Answer<"/v1/business/queues">[number];
type Member = Answer<"/v1/organizations/{organizationId}/members">[number];
type IntakeField = Schemas["IntakeField"];
type Notice = { kind: "error" | "ok" | "info"; text: string } | null;

function Key({ k }: { k: string }) {
  return <kbd aria-hidden="true">{k}</kbd>;
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [phase, setPhase] = useState<"loading" | "signin" | "pick" | "desk">("loading");
  const [lang, setLang] = useState<PageLang>(staffPageLang());
  // The document speaks the page's language, right to left in Arabic, from the first screen (sign-in) on.
  // Before the paint, with the words of the same render: the page never shows one language under another's lang.
  useLayoutEffect(() => showLang(lang), [lang]);
  const t = TEXT[lang];
  const [locations, setLocations] = useState<Location[]>([]);
  const [locationId, setLocationId] = useState<string>("");
  const [desks, setDesks] = useState<Desk[]>([]);
  const [desk, setDesk] = useState<Desk | null>(null);
  const [allQueues, setAllQueues] = useState<Queue[]>([]);
  const [colleagues, setColleagues] = useState<Member[]>([]);
  const [outcomes, setOutcomes] = useState<Record<string, ServiceOutcome[]>>({});
  // The services' intake questions, read once per service when the desk opens: the card labels the answers with them.
  const [questions, setQuestions] = useState<Record<string, IntakeField[]>>({});
  // Until they are read, the walk-in cannot be sent: a form without its questions would be refused by the API.
  const [questionsRead, setQuestionsRead] = useState(false);
  // The languages the organization offers its visitors and its default (a walk-in's language choice).
  const [offered, setOffered] = useState<{ languages: PageLang[]; defaultLanguage: PageLang } | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [busy, setBusy] = useState(false);
  const [clock, setClock] = useState(Date.now());
  const [generation, setGeneration] = useState(0);
  const langRef = useRef(lang);
  langRef.current = lang;

  const fail = (err: unknown) => setNotice({ kind: "error", text: refusalText(err, lang) });
  const {
    view,
    error: readError,
    live,
    refresh,
  } = useDeskView(phase === "desk" ? desk : null, {
    reconnected: () => {
      setNotice({ kind: "ok", text: TEXT[langRef.current].resynced });
      setGeneration((g) => g + 1);
    },
    offline: () => setNotice({ kind: "info", text: TEXT[langRef.current].reconnecting }),
  });
  // The floor's alerts naming this desk, read again after each read of the desk and every 15 s.
  const { alerts, error: alertsError, retry: retryAlerts } = useStaffAlerts(phase === "desk" ? desk : null, view);
  const current = view?.current ?? null;
  const held = view?.held ?? [];

  // ---- who is there
  const loadMe = async () => {
    try {
      const found = await get("/v1/auth/me", {});
      setMe(found);
      const chosen = signedInLang(found.user.language);
      setLang(chosen);
      rememberLang(chosen);
      const membership = found.memberships[0];
      if (!membership) {
        setNotice({ kind: "error", text: TEXT[chosen].noOrg });
        setPhase("pick");
        return;
      }
      defaultHeaders["X-Organization-Id"] = membership.organizationId;
      get("/v1/organizations/{organizationId}", { organizationId: membership.organizationId }).then(
        (org) => setOffered({ languages: org.languages, defaultLanguage: org.defaultLanguage }),
        // Unread, a walk-in may still be given any language, the branch's default first.
        () => setOffered(null),
      );
      const locs = await get("/v1/business/locations", {}, { limit: 100 });
      setLocations(locs);
      const first = locs[0]?.id ?? "";
      setLocationId(first);
      if (first) await loadDesks(first, found);
      else setPhase("pick");
    } catch (err) {
      if (!(err instanceof ApiRefusal && err.status === 401)) fail(err);
      setPhase("signin");
    }
  };

  const loadDesks = async (loc: string, who: Me | null = me) => {
    const list = await get("/v1/locations/{locationId}/desks", { locationId: loc }, { limit: 100 });
    setDesks(list);
    const mine = list.find((d) => d.status === "open" && d.operatorId === who?.user.id);
    if (mine) await enterDesk(mine, who);
    else setPhase("pick");
  };

  /** The desk at once (its live read starts), then what it needs once: other queues (transfer), colleagues, per service its outcomes and questions. */
  const enterDesk = async (d: Desk, who: Me | null = me) => {
    setDesk(d);
    setPhase("desk");
    setQuestionsRead(false);
    // A failure here is said (under the buttons); the desk still works, only the dialogs lack their lists.
    try {
      await readDeskNeeds(d, who);
    } catch (err) {
      fail(err);
    } finally {
      setQuestionsRead(true);
    }
  };

  const readDeskNeeds = async (d: Desk, who: Me | null) => {
    const org = defaultHeaders["X-Organization-Id"] ?? "";
    const [all, members] = await Promise.all([
      get("/v1/business/queues", {}, { limit: 100 }),
      get("/v1/organizations/{organizationId}/members", { organizationId: org }, { limit: 100 }),
    ]);
    const serviceIds = [...new Set(all.filter((q) => d.queueIds.includes(q.id)).map((q) => q.serviceId))];
    const outs: Record<string, ServiceOutcome[]> = {};
    const asks: Record<string, IntakeField[]> = {};
    await Promise.all(
      serviceIds.map(async (serviceId) => {
        const [list, intake] = await Promise.all([
          get("/v1/services/{serviceId}/outcomes", { serviceId }),
          get("/v1/services/{serviceId}/intake", { serviceId }),
        ]);
        outs[serviceId] = list;
        asks[serviceId] = intake.fields;
      }),
    );
    setAllQueues(all);
    setColleagues(members.filter((m) => m.userId !== who?.user.id));
    setOutcomes(outs);
    setQuestions(asks);
  };

  useEffect(() => {
    void loadMe();
    const timer = setInterval(() => setClock(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);

  // ---- verbs: each refusal is said; the desk is read again after each
  const act = async (what: () => Promise<unknown>, done?: (result: unknown) => Notice) => {
    if (busy) return;
    setBusy(true);
    setNotice(null);
    try {
      const result = await what();
      if (done) setNotice(done(result));
    } catch (err) {
      fail(err);
    } finally {
      await refresh();
      setBusy(false);
    }
  };

  const callNextNow = (previousOutcome?: "served" | "no_show") =>
    act(
      () => post("/v1/desks/{deskId}/call-next", { deskId: desk!.id }, previousOutcome ? { previousOutcome } : undefined),
      (ticket) => ({ kind: "ok", text: t.called((ticket as Ticket).displayCode, desk!.displayName ?? desk!.name) }),
    );

  // A customer called but never started: ask what became of them, so the expiry sweep does not count a served customer as a no-show.
  const callNext = () => (current && current.status === "called" ? setDialog({ kind: "previous", ticket: current }) : callNextNow());

  // One request: the desk's call-next closes the never-started call as served or absent, then calls.
  const settlePrevious = async (_ticket: Ticket, outcome: "served" | "absent") => {
    setDialog(null);
    await callNextNow(outcome === "served" ? "served" : "no_show");
  };

  const markVip = (tk: Ticket, on: boolean) =>
    act(
      () => (on ? post("/v1/tickets/{ticketId}/vip", { ticketId: tk.id }) : del("/v1/tickets/{ticketId}/vip", { ticketId: tk.id })),
      () => ({ kind: "ok", text: on ? t.markedVip(tk.displayCode) : t.unmarkedVip(tk.displayCode) }),
    );

  const ticketId = () => ({ ticketId: current!.id });

  /**
   * Start-serving and completion wait for the service's `at_serve` questions (docs/visits.md): a
   * 409 INTAKE_REQUIRED opens a dialog with the missing ones (read again: they may be new), and
   * once they are saved on the ticket, the refused action runs again.
   */
  const askingIntake = async (tk: Ticket, action: () => Promise<unknown>): Promise<unknown> => {
    try {
      return await action();
    } catch (err) {
      if (!(err instanceof ApiRefusal && err.code === "INTAKE_REQUIRED")) throw err;
      const keys = missingKeys(err.details);
      const fields = (await get("/v1/services/{serviceId}/intake", { serviceId: tk.serviceId })).fields.filter((f) => keys.includes(f.key));
      if (fields.length === 0) throw err;
      setDialog({ kind: "intake", ticket: tk, fields, retry: action });
      return undefined;
    }
  };

  const saveIntake = async (tk: Ticket, answers: Record<string, string | number | boolean>, retry: () => Promise<unknown>) => {
    try {
      await patch("/v1/tickets/{ticketId}/intake", { ticketId: tk.id }, { answers });
    } catch (err) {
      if (err instanceof ApiRefusal && err.code === "VALIDATION_ERROR") return joinRefusal(err, lang, questions[tk.serviceId] ?? []);
      return { field: null, text: refusalText(err, lang) };
    }
    setDialog(null);
    await act(() => askingIntake(tk, retry));
    return null;
  };

  const verbs = {
    recall: () => act(() => post("/v1/tickets/{ticketId}/recall", ticketId())),
    serve: () => {
      const tk = current!;
      return act(() => askingIntake(tk, () => post("/v1/tickets/{ticketId}/serve", { ticketId: tk.id })));
    },
    noShow: () => act(() => post("/v1/tickets/{ticketId}/skip-absent", ticketId(), { reason: "absent" })),
    back: (position: "first" | "last") => act(() => post("/v1/tickets/{ticketId}/return", ticketId(), { position })),
    complete: (outcome: string, note: string) => {
      const tk = current!;
      const body = { ...(outcome ? { outcome } : {}), ...(note ? { note } : {}) };
      return act(() => askingIntake(tk, () => post("/v1/tickets/{ticketId}/complete", { ticketId: tk.id }, body)));
    },
  };
  const resume = (tk: Ticket) => act(() => post("/v1/tickets/{ticketId}/resume", { ticketId: tk.id }, {}));
  const toggleHold = () => {
    if (current) return act(() => post("/v1/tickets/{ticketId}/hold", ticketId(), {}));
    const mine = held.find((h) => h.assignedToId === me?.user.id) ?? held[0];
    if (mine) return resume(mine);
  };

  const openDesk = (d: Desk) =>
    act(async () => {
      const opened = await post("/v1/desks/{deskId}/open", { deskId: d.id });
      await enterDesk(opened);
    });

  const closeDesk = () =>
    act(
      async () => {
        await post("/v1/desks/{deskId}/close", { deskId: desk!.id });
        setDesk(null);
        setPhase("pick");
        await loadDesks(locationId);
      },
      () => ({ kind: "info", text: t.deskClosed }),
    );

  const signOut = async () => {
    try {
      await post("/v1/auth/logout", {});
    } catch (err) {
      // Signed out either way on this screen; say why the server did not confirm it.
      fail(err);
    }
    setDesk(null);
    setMe(null);
    setPhase("signin");
  };

  const switchLang = (next: PageLang) => {
    setLang(next);
    rememberLang(next);
  };

  const can = {
    recall: current?.status === "called",
    serve: current?.status === "called",
    complete: current?.status === "serving",
    noShow: current?.status === "called",
    hold: !!current || held.length > 0,
    back: !!current,
    transfer: !!current,
  };

  // ---- keyboard: one letter per verb, shown on its button; never while typing or in a dialog
  const keys = useRef<Record<string, () => unknown>>({});
  keys.current = {
    n: callNext,
    r: () => can.recall && verbs.recall(),
    s: () => can.serve && verbs.serve(),
    c: () => can.complete && setDialog({ kind: "complete" }),
    a: () => can.noShow && verbs.noShow(),
    h: () => can.hold && toggleHold(),
    f: () => can.back && verbs.back("first"),
    l: () => can.back && verbs.back("last"),
    t: () => can.transfer && setDialog({ kind: "transfer" }),
    w: () => setDialog({ kind: "walkin" }),
  };
  const dialogOpen = useRef(false);
  dialogOpen.current = dialog !== null;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (phase !== "desk" || e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target as HTMLElement;
      if (dialogOpen.current || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) {
        if (e.key === "Escape") setDialog(null);
        return;
      }
      const run = keys.current[e.key.toLowerCase()];
      if (run) {
        e.preventDefault();
        run();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [phase]);

  // ---- screens
  const branch = view?.location ?? locations.find((l) => l.id === (desk?.locationId ?? locationId)) ?? null;
  const bar = (
    <header class="bar">
      <h1>{desk ? `${t.title} — ${desk.displayName ?? desk.name}` : t.title}</h1>
      {branch && phase !== "signin" && (
        <span class="branch" data-branch={branch.id}>
          <span class="sr-only">{t.branch} : </span>
          {branch.name}
        </span>
      )}
      <span class="spacer" />
      {phase === "desk" && (
        <span class={`live ${live === "offline" ? "offline" : ""}`} role="status" data-live={live}>
          {live === "offline" ? t.reconnecting : t.live}
        </span>
      )}
      {me && <span>{me.user.firstName}</span>}
      <LanguageSelect lang={lang} label={t.languages} onPick={switchLang} />
      {me && me.memberships.some((m) => m.role !== "operator") && (
        <a class="barlink" href="/console/floor">
          {t.floor}
        </a>
      )}
      {me && (
        <button type="button" onClick={signOut}>
          {t.signOut}
        </button>
      )}
    </header>
  );

  if (phase === "loading") return <div>{bar}</div>;
  if (phase === "signin")
    return (
      <div>
        {bar}
        <SignIn t={t} lang={lang} onDone={() => void loadMe()} />
      </div>
    );

  const noticeView = notice && (
    <p
      class={`notice ${notice.kind === "error" ? "error" : notice.kind === "ok" ? "ok" : ""}`}
      role={notice.kind === "error" ? "alert" : "status"}
    >
      {notice.text}
    </p>
  );

  if (phase === "pick" || !desk)
    return (
      <div>
        {bar}
        <section class="pick card" aria-labelledby="pick-title">
          <h2 id="pick-title">{t.chooseDesk}</h2>
          {locations.length > 1 && (
            <label>
              {t.location}
              <select
                value={locationId}
                onChange={(e: Event) => {
                  const id = (e.target as HTMLSelectElement).value;
                  setLocationId(id);
                  loadDesks(id).catch(fail);
                }}
              >
                {locations.map((l) => (
                  <option value={l.id}>{l.name}</option>
                ))}
              </select>
            </label>
          )}
          {noticeView}
          {desks.length === 0 && <p class="muted">{t.noDesk}</p>}
          <ul class="desks">
            {desks.map((d) => {
              const taken = d.status === "open" && d.operatorId !== me?.user.id;
              return (
                <li>
                  <button type="button" class="desk" disabled={taken || busy} onClick={() => openDesk(d)}>
                    <strong>{d.displayName ?? d.name}</strong>
                    <span class="muted">{taken ? t.openedBy : t.open}</span>
                  </button>
                </li>
              );
            })}
          </ul>
        </section>
      </div>
    );

  const deskQueues = view?.queues ?? [];
  // A walk-in speaks the branch's default language unless the clerk picks another (never the console's own).
  const branchDefault = locations.find((l) => l.id === (desk?.locationId ?? locationId))?.defaultLanguage ?? null;
  const offeredLanguages = offered?.languages ?? allPageLangs();
  const visitor = {
    offered: offeredLanguages,
    preset:
      branchDefault && offeredLanguages.includes(branchDefault)
        ? branchDefault
        : (offered?.defaultLanguage ?? branchDefault ?? offeredLanguages[0]!),
  };
  const where = (tk: Ticket) => {
    const q = deskQueues.find((x) => x.id === tk.queueId);
    return `${q?.serviceName ?? ""} · ${q?.name ?? allQueues.find((x) => x.id === tk.queueId)?.name ?? ""}`;
  };
  const Btn = (p: { k: string; label: string; on: () => unknown; enabled: boolean; kind?: string }) => (
    <button type="button" class={p.kind ?? ""} disabled={!p.enabled || busy} onClick={() => p.on()} aria-keyshortcuts={p.k.toUpperCase()}>
      {p.label}
      <Key k={p.k.toUpperCase()} />
    </button>
  );

  return (
    <div class="desk-screen">
      {bar}
      <DeskBanners
        view={view}
        readError={readError}
        t={t}
        lang={lang}
        retry={() => void refresh()}
        alerts={alerts}
        alertsError={alertsError}
        retryAlerts={retryAlerts}
      />
      <div class="layout">
        <section class="current card" aria-labelledby="current-title">
          <h2 id="current-title">{t.current}</h2>
          <CurrentCard
            ticket={current}
            t={t}
            lang={lang}
            timeZone={view?.location.timezone}
            where={current ? where(current) : ""}
            questions={current ? (questions[current.serviceId] ?? []) : []}
          />
          <div class="verbs" role="group" aria-label={t.current}>
            <Btn k="n" label={t.callNext} on={callNext} enabled={true} kind="primary big" />
            <Btn k="r" label={t.recall} on={verbs.recall} enabled={can.recall} />
            <Btn k="s" label={t.startServing} on={verbs.serve} enabled={can.serve} />
            <Btn k="c" label={t.complete} on={() => setDialog({ kind: "complete" })} enabled={can.complete} />
            <Btn k="a" label={t.noShow} on={verbs.noShow} enabled={can.noShow} kind="danger" />
            <Btn k="h" label={current ? t.hold : t.resume} on={toggleHold} enabled={can.hold} />
            <Btn k="f" label={t.returnFirst} on={() => verbs.back("first")} enabled={can.back} />
            <Btn k="l" label={t.returnLast} on={() => verbs.back("last")} enabled={can.back} />
            <Btn k="t" label={t.transfer} on={() => setDialog({ kind: "transfer" })} enabled={can.transfer} />
            <Btn k="w" label={t.walkIn} on={() => setDialog({ kind: "walkin" })} enabled={true} />
          </div>
          {noticeView}
          <p class="muted small">{t.shortcuts}</p>
          <Conversation ticket={current} lang={lang} timeZone={view?.location.timezone} signal={view} />
          <button type="button" class="linkish" onClick={closeDesk} disabled={busy}>
            {t.closeDesk}
          </button>
        </section>
        <div class="side">
          <section class="line card" aria-labelledby="line-title">
            {view && <WaitingLine view={view} t={t} lang={lang} clock={clock} busy={busy} onVip={markVip} />}
            <HeldList held={held} t={t} busy={busy} onResume={resume} />
          </section>
          <DayAppointments
            locationId={desk.locationId}
            timeZone={view?.location.timezone}
            t={t}
            lang={lang}
            generation={generation}
            onCheckedIn={(text) => {
              setNotice({ kind: "ok", text });
              void refresh();
            }}
          />
        </div>
      </div>
      {dialog && (
        <DialogView
          dialog={dialog}
          t={t}
          current={current}
          outcomes={current ? (outcomes[current.serviceId] ?? []) : []}
          queues={allQueues.filter((q) => q.id !== current?.queueId)}
          colleagues={colleagues}
          deskQueues={deskQueues}
          visitor={visitor}
          onClose={() => setDialog(null)}
          onComplete={(outcome, note) => {
            setDialog(null);
            void verbs.complete(outcome, note);
          }}
          onPrevious={settlePrevious}
          onTransfer={(target, prioritize) => {
            setDialog(null);
            // "usr_…" hands the customer to a colleague (same ticket); a queue id moves the ticket to that queue.
            if (target.startsWith("usr_"))
              void act(() => post("/v1/tickets/{ticketId}/transfer", ticketId(), { targetOperatorId: target }));
            else void act(() => post("/v1/tickets/{ticketId}/transfer-queue", ticketId(), { targetQueueId: target, prioritize }));
          }}
          questions={questionsRead ? questions : null}
          lang={lang}
          onIntake={saveIntake}
          onWalkIn={async ({ queueId, vip, body }) => {
            // The dialog stays open on a refusal, with the refusal under the input at fault.
            try {
              const tk = await post(vip ? "/v1/queues/{queueId}/vip-ticket" : "/v1/queues/{queueId}/operator-join", { queueId }, body);
              setDialog(null);
              setNotice({ kind: "ok", text: t.walkInAdded(tk.displayCode) });
              await refresh();
              return null;
            } catch (err) {
              if (err instanceof ApiRefusal && err.code === "VALIDATION_ERROR")
                return joinRefusal(err, lang, questions[deskQueues.find((q) => q.id === queueId)?.serviceId ?? ""]);
              return { field: null, text: refusalText(err, lang) };
            }
          }}
        />
      )}
    </div>
  );
}

render(<App />, document.getElementById("app")!);

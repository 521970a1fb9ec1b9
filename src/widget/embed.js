/*! Queue widget: queue status, join form and display board. No dependencies; see README "Widget". */
(() => {
  "use strict";
  // Served minified (scripts/build-embed.mjs, esbuild): comments and long names are for readers here.
  // Captured now: currentScript is only set while the script first runs (also when async);
  // a tag manager that injects the script may leave it null, hence the lookup by path.
  const me = document.currentScript || document.querySelector('script[src*="/v1/embed.js"]');
  const scriptOrigin = me && me.src ? new URL(me.src, location.href).origin : location.origin;

  const T = {
    en: {
      waiting: "Waiting", wait: "Estimated wait", min: "~{n} min", serving: "Now serving", next: "Next",
      nowServing: "Now serving {code}", called: "{code}, {where}", none: "None yet",
      active: "Open", paused: "Paused", closed: "Closed",
      pausedMsg: "This queue is paused: taking a ticket is not possible right now.",
      closedMsg: "This queue is closed.", fullMsg: "This queue is full. Please try again later.",
      notFound: "Queue not found", orgNotFound: "Organization not found",
      auth: "This widget's API key is missing or not valid.",
      offline: "Cannot reach the queue service. Retrying…",
      config: "Widget configuration is incomplete: {what} is missing.",
      loading: "Loading…", failed: "Something went wrong.",
      join: "Take a ticket", name: "Your name (optional)", phone: "Phone for notifications (optional, e.g. +33612345678)",
      party: "Party size", sending: "Sending…", ticket: "Your ticket", position: "Position in line: {n}",
      another: "Take another ticket", joinFailed: "Could not take a ticket: {msg}", yourTicket: "Your ticket is {code}",
      noQueues: "No queue to display", sound: "Enable sound",
      yourTurn: "It's your turn — go to {counter}", yourTurnNow: "It's your turn!", leave: "Leave the queue",
      left: "You left the queue.", served: "You have been served. Thank you!", missed: "Your turn has passed.",
      ended: "This ticket is no longer active.", calledAt: "Called {code}",
      onHold: "Your ticket is on hold: the desk will call you back.",
      late: "I'm running late", back: "Your place is kept: back in line at {time}.", lateNo: "A later turn is not possible now.",
      bookTitle: "Book an appointment", bookService: "Choose a service", bookDay: "Choose a day", bookSlot: "Choose a time",
      bookDetails: "Your details", bookBack: "Back", bookNoSlot: "No free time in the next two weeks: please call the branch.",
      bookNoService: "No service takes appointments here.", bookName: "Your name", bookPhone: "Mobile phone for the confirmation (optional, e.g. +33612345678)",
      bookEmail: "E-mail (optional)", bookLang: "Language of the messages", bookConfirm: "Confirm the appointment", bookHeld: "This time is kept for you for 5 minutes.",
      bookTaken: "This time was just taken: please choose another one.", bookNameMissing: "Please enter your name.",
      bookPhoneBad: "Enter the number in international format (+ and digits).", bookEmailBad: "Please check the e-mail address.",
      bookDone: "Your appointment is booked", bookCode: "Check-in code", bookCodeHint: "When you arrive, enter this code at the kiosk (\"I have an appointment\").",
      bookManage: "See, move or cancel the appointment", bookAnother: "Book another appointment", bookWith: "{service}, {when}",
      qOptional: "(optional)", qRequired: "Please answer this question.", qConsent: "Please tick the box to continue.",
      qText: "Please write a short answer (at most 500 characters).", qNumber: "Please enter a number.",
      qSelect: "Please choose one of the answers.", qDate: "Please enter a date.",
      qPhone: "Please enter the number in international format, e.g. +33 6 12 34 56 78.",
      qEmail: "Please enter an email address, e.g. name@example.com.",
    },
    fr: {
      waiting: "En attente", wait: "Attente estimée", min: "~{n} min", serving: "Numéros appelés", next: "Prochains",
      nowServing: "Numéro appelé : {code}", called: "{code}, {where}", none: "Aucun pour l'instant",
      active: "Ouverte", paused: "En pause", closed: "Fermée",
      pausedMsg: "Cette file est en pause : impossible de prendre un ticket pour le moment.",
      closedMsg: "Cette file est fermée.", fullMsg: "Cette file est complète. Réessayez plus tard.",
      notFound: "File introuvable", orgNotFound: "Organisation introuvable",
      auth: "La clé API de ce widget est absente ou invalide.",
      offline: "Service de file d'attente injoignable. Nouvel essai…",
      config: "Configuration du widget incomplète : {what} manquant.",
      loading: "Chargement…", failed: "Une erreur est survenue.",
      join: "Prendre un ticket", name: "Votre nom (facultatif)", phone: "Téléphone pour être prévenu (facultatif, ex. +33612345678)",
      party: "Nombre de personnes", sending: "Envoi…", ticket: "Votre ticket", position: "Position dans la file : {n}",
      another: "Prendre un autre ticket", joinFailed: "Impossible de prendre un ticket : {msg}", yourTicket: "Votre ticket est le {code}",
      noQueues: "Aucune file à afficher", sound: "Activer le son",
      yourTurn: "C'est votre tour — rendez-vous à : {counter}", yourTurnNow: "C'est votre tour !", leave: "Quitter la file",
      left: "Vous avez quitté la file.", served: "Vous avez été servi. Merci !", missed: "Votre tour est passé.",
      ended: "Ce ticket n'est plus actif.", calledAt: "Appel du {code}",
      onHold: "Votre ticket est en attente : le guichet vous rappellera.",
      late: "Je suis en retard", back: "Votre place est gardée : retour dans la file à {time}.", lateNo: "Un tour plus tard n'est pas possible pour le moment.",
      bookTitle: "Prendre rendez-vous", bookService: "Choisissez un service", bookDay: "Choisissez un jour", bookSlot: "Choisissez un horaire",
      bookDetails: "Vos coordonnées", bookBack: "Retour", bookNoSlot: "Aucun créneau libre dans les deux prochaines semaines : merci d'appeler l'agence.",
      bookNoService: "Aucun service ne prend de rendez-vous ici.", bookName: "Votre nom", bookPhone: "Mobile pour la confirmation (facultatif, ex. +33612345678)",
      bookEmail: "E-mail (facultatif)", bookLang: "Langue des messages", bookConfirm: "Confirmer le rendez-vous", bookHeld: "Cet horaire vous est réservé pendant 5 minutes.",
      bookTaken: "Cet horaire vient d'être pris : merci d'en choisir un autre.", bookNameMissing: "Merci d'indiquer votre nom.",
      bookPhoneBad: "Saisissez le numéro au format international (+ et chiffres).", bookEmailBad: "Merci de vérifier l'adresse e-mail.",
      bookDone: "Votre rendez-vous est réservé", bookCode: "Code d'arrivée", bookCodeHint: "À votre arrivée, saisissez ce code sur la borne (« J'ai un rendez-vous »).",
      bookManage: "Voir, déplacer ou annuler le rendez-vous", bookAnother: "Prendre un autre rendez-vous", bookWith: "{service}, {when}",
      qOptional: "(facultatif)", qRequired: "Merci de répondre à cette question.", qConsent: "Merci de cocher la case pour continuer.",
      qText: "Merci d'écrire une réponse courte (500 caractères au plus).", qNumber: "Merci de saisir un nombre.",
      qSelect: "Merci de choisir une des réponses.", qDate: "Merci de saisir une date.",
      qPhone: "Merci de saisir le numéro au format international, par ex. +33 6 12 34 56 78.",
      qEmail: "Merci de saisir une adresse e-mail, par ex. nom@exemple.fr.",
    },
  };
  // The catalogue's words for the languages beyond en and fr (its `widget` and `intake` sections),
  // every language's locale and own name, put in when the script is served (embed.routes.ts).
  const MORE = QW_CATALOGUE;
  // The catalogue's languages, in its order (src/domain/languages): a language added there is known
  // here too. A page may still pass its own words (`strings`, as the board page does); a missing
  // word falls back to English.
  const LANGS = Object.keys(MORE.locales);
  const RTL = ["ar", "fa", "he", "ur"];
  const LOCALES = Object.assign({ en: "en-GB", fr: "fr-FR" }, MORE.locales);
  /** The statuses of a ticket the visitor still holds (a held one comes back to the desk). */
  const LIVE = ["waiting", "called", "serving", "held"];
  const fmt = (s, v) => s.replace(/\{(\w+)\}/g, (_, k) => String(v[k]));
  const enc = encodeURIComponent;

  const CSS = `:host{all:initial;display:block}
.qw{--bg:#fff;--fg:#111827;--mut:#4b5563;--bd:#e5e7eb;display:block;box-sizing:border-box;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);border:1px solid var(--bd);border-radius:12px;padding:16px;max-width:420px;text-align:start}
.qw *{box-sizing:border-box}.qw.dark{--bg:#111827;--fg:#f9fafb;--mut:#d1d5db;--bd:#374151}
.hd{display:flex;align-items:center;gap:10px;margin-bottom:12px}.logo{height:32px;border-radius:6px}
.nm{font-weight:600;font-size:17px;flex:1;margin:0}
.badge{font-size:12px;padding:2px 8px;border-radius:99px;background:var(--p);color:#fff}.badge.paused{background:#b45309}.badge.closed{background:#4b5563}
.stats{display:flex;gap:24px;flex-wrap:wrap}.big{font-size:36px;font-weight:700;color:var(--p);line-height:1.1}
.lbl{font-size:12px;color:var(--mut);text-transform:uppercase;letter-spacing:.04em}
.codes{display:flex;flex-wrap:wrap;gap:6px;margin-top:4px}.code{direction:ltr;unicode-bidi:isolate;font-weight:700;padding:2px 8px;border-radius:6px;border:2px solid var(--p)}
.msg{margin-top:12px;padding:8px 10px;border-radius:8px;background:#fef3c7;color:#78350f}.msg.err{background:#fee2e2;color:#7f1d1d}
form{display:grid;gap:8px;margin-top:14px}label{display:grid;gap:2px;font-size:13px;color:var(--mut)}
input{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--bd);border-radius:8px;padding:8px}
input[type=tel]{direction:ltr;unicode-bidi:isolate}.qw[dir=rtl] input[type=tel]{text-align:right}
button{font:inherit;font-weight:600;color:#fff;background:var(--p);border:0;border-radius:8px;padding:10px;cursor:pointer}button:disabled{opacity:.5}
.ticket{text-align:center;margin-top:14px;padding:12px;border:2px dashed var(--p);border-radius:10px}.ticket .big{font-size:48px}
.ticket.turn{background:var(--p);color:#fff;border-style:solid}.ticket.turn .big,.ticket.turn .lbl{color:#fff}
.turnmsg{font-size:20px;font-weight:700;margin:8px 0}.ticket.done{border-style:solid;border-color:var(--bd)}
button.sec{background:none;color:var(--p);border:1px solid currentColor;margin-top:8px}.ticket.turn button.sec{color:#fff}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.compact{padding:8px 12px}.compact .hd{margin:0 0 4px}.compact .big{font-size:22px}.compact .stats{gap:12px}
.board{max-width:none;min-height:100%;border:0;border-radius:0;padding:3vmin;font-size:2.2vmin}
.board .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(40vmin,1fr));gap:3vmin}
.board h2{font-size:4vmin;margin:0 0 1.5vmin}
.call{display:flex;justify-content:space-between;align-items:baseline;gap:2vmin;padding:1.5vmin 2.5vmin;border-radius:1.5vmin;background:var(--p);color:#fff;margin-bottom:1.2vmin}
.call .c{font-size:9vmin;font-weight:800}.call .w{font-size:3.5vmin}
.call.old{background:none;color:var(--fg);border:2px solid var(--bd)}.call.old .c{font-size:5vmin}
.board .code{font-size:3.5vmin}.board .lbl{font-size:2vmin;margin-top:1vmin}.new{animation:fl 1s ease-in-out 3}@keyframes fl{50%{opacity:.3}}@media (prefers-reduced-motion:reduce){.new{animation:none}}
.snd{position:fixed;inset-inline-end:2vmin;bottom:2vmin;width:auto}
.bk h3{font-size:16px;margin:4px 0 10px}.bk h3:focus{outline:none}.picks{display:grid;grid-template-columns:repeat(auto-fill,minmax(110px,1fr));gap:8px}
.picks.wide{grid-template-columns:1fr}.pick{background:var(--bg);color:var(--p);border:2px solid var(--p)}.pick:hover,.pick:focus-visible{background:var(--p);color:#fff}
button:focus-visible,input:focus-visible,select:focus-visible,a:focus-visible{outline:3px solid var(--p);outline-offset:2px}
select{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--bd);border-radius:8px;padding:8px}
.chosen{color:var(--mut);margin:0 0 8px}.bkcode{font:700 40px/1.1 ui-monospace,Menlo,monospace;letter-spacing:.12em;color:var(--p);margin:4px 0}
.ticket a{color:var(--p);font-weight:600}.err-in{font-size:13px;color:#b91c1c}
fieldset{border:1px solid var(--bd);border-radius:8px;padding:6px 8px;margin:0;display:grid;gap:4px}legend{font-size:13px;color:var(--mut)}
.opt{display:flex;align-items:center;gap:8px;font-size:15px;color:var(--fg)}.qs{display:grid;gap:8px}`;

  /** A DOM element with text children only: server data never becomes markup. */
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
    for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k);
    return e;
  }

  const flag = (v, fallback) =>
    v === undefined || v === null ? fallback : typeof v === "boolean" ? v : !/^(false|0|no|off)$/i.test(String(v));

  /** window.QueueWidgetConfig (or mount()'s config) first, then the element's data-* attributes. */
  /** Words given by the page: an object, or its JSON in data-strings. */
  function readStrings(v) {
    if (!v) return {};
    if (typeof v === "object") return v;
    try {
      const parsed = JSON.parse(String(v));
      return parsed && typeof parsed === "object" ? parsed : {};
    } catch {
      return {};
    }
  }

  /** The board's voices (data-voices): [{language, name, locale, say, sayCode}], at most three; null: the board's own language. */
  function readVoices(v) {
    let list = v;
    if (typeof v === "string") {
      try {
        list = JSON.parse(v);
      } catch {
        return null;
      }
    }
    if (!Array.isArray(list)) return null;
    const ok = list.filter((x) => x && typeof x === "object" && typeof x.locale === "string" && typeof x.say === "string" && typeof x.sayCode === "string");
    return ok.length ? ok.slice(0, 3) : null;
  }

  function options(host, given) {
    const data = host.dataset;
    const pick = (key, attr) => (given[key] !== undefined ? given[key] : data[attr || key]);
    const type = ["status", "join", "board", "book"].includes(pick("type")) ? pick("type") : "status";
    const lang = String(pick("language") || document.documentElement.lang || "en").slice(0, 2).toLowerCase();
    const color = String(pick("primaryColor") || "");
    let queues = pick("queues");
    if (typeof queues === "string") queues = queues.split(",").map((q) => q.trim()).filter(Boolean);
    let services = pick("services");
    if (typeof services === "string") services = services.split(",").map((q) => q.trim()).filter(Boolean);
    return {
      organizationId: pick("organizationId", "organization"),
      locationId: pick("locationId", "location") || null,
      queueId: pick("queueId", "queue"),
      apiKey: pick("apiKey"),
      type,
      theme: pick("theme") === "dark" ? "dark" : "light",
      primaryColor: /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(color) ? color : "#2563eb",
      language: LANGS.includes(lang) ? lang : "en",
      dir: pick("dir") === "rtl" || (pick("dir") === undefined && RTL.includes(lang)) ? "rtl" : "ltr",
      locale: String(pick("locale") || LOCALES[lang] || lang),
      strings: readStrings(pick("strings")),
      voices: readVoices(pick("voices")),
      showLogo: flag(pick("showLogo"), true),
      compact: flag(pick("compact"), false),
      showEstimatedWait: flag(pick("showEstimatedWait"), true),
      allowJoin: flag(pick("allowJoin"), type === "join"),
      sound: flag(pick("sound"), false),
      kiosk: flag(pick("kiosk"), false),
      callMinutes: Math.min(60, Math.max(1, Number(pick("callMinutes")) || 5)),
      voice: flag(pick("voice"), true),
      layout: pick("layout") === "desks" ? "desks" : "queues",
      queues: Array.isArray(queues) && queues.length ? queues.map(String) : null,
      services: Array.isArray(services) && services.length ? services.map(String) : null,
      webPush: flag(pick("webPush"), false),
      pushWorker: String(pick("pushWorker") || "/queue-push-sw.js"),
      onTicketCreated: typeof given.onTicketCreated === "function" ? given.onTicketCreated : null,
      apiBase: String(pick("apiBase") || scriptOrigin).replace(/\/+$/, ""),
    };
  }

  /** Calls the API; failures become {code, message} (code OFFLINE when the service is unreachable). */
  async function api(o, method, path, body, withKey, extraHeaders) {
    const headers = { ...(extraHeaders || {}) };
    // The public status route gets no key, so it stays a simple CORS request (no preflight).
    if (withKey && o.apiKey) headers["X-API-Key"] = o.apiKey;
    if (body) headers["Content-Type"] = "application/json";
    let res;
    try {
      res = await fetch(o.apiBase + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
    } catch {
      throw { code: "OFFLINE", message: "" };
    }
    const json = await res.json().catch(() => null);
    if (res.ok && json && json.success) return json.data;
    const e = (json && json.error) || {};
    throw { code: e.code || (res.status === 404 ? "NOT_FOUND" : `HTTP_${res.status}`), message: e.message || "", details: e.details || {} };
  }

  /** Web push opt-in (webPush): the subscription is tied to the ticket by the key that took it (docs/notifications.md). */
  async function optInPush(o, id) {
    if (!o.webPush || !("serviceWorker" in navigator) || !window.PushManager) return;
    try {
      const { publicKey } = await api(o, "GET", "/v1/widget/push/public-key");
      if (!publicKey || (await Notification.requestPermission()) !== "granted") return;
      const reg = await navigator.serviceWorker.register(o.pushWorker);
      const key = Uint8Array.from(atob(publicKey.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
      const { endpoint, keys } = (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })).toJSON();
      await api(o, "POST", `/v1/widget/tickets/${enc(id)}/push-subscription`, { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth }, language: o.language }, true);
    } catch (e) { console.warn("web push opt-in failed", e); }
  }

  function errorText(t, e, org) {
    switch (e.code) {
      case "OFFLINE": return t.offline;
      case "NOT_FOUND": return org ? t.orgNotFound : t.notFound;
      case "AUTHENTICATION_ERROR": case "KEY_REVOKED": case "AUTHORIZATION_ERROR": return t.auth;
      case "QUEUE_PAUSED": return t.pausedMsg;
      case "QUEUE_CLOSED": return t.closedMsg;
      case "QUEUE_FULL": return t.fullMsg;
      default: return e.message || t.failed;
    }
  }

  /**
   * The live channel: one WebSocket for all the widget's queues, reconnecting with capped
   * exponential backoff and jitter; while it is down, `poll` runs every 30 s instead.
   */
  function live(o, onUpdate, poll, first, view, onTicket) {
    const queues = new Set();
    const tickets = new Map(); // ticketId → token: the visitor's own ticket, followed with its token
    // Knowing a queue up front lets the server put the socket straight into its room. A board
    // asks for `board_update` (the whole board of each queue), so it never refetches over HTTP.
    const url = `${o.apiBase.replace(/^http/, "ws")}/v1/widget/ws${first ? `?queueId=${enc(first)}${view ? `&view=${view}` : ""}` : ""}`;
    let ws = null, attempt = 0, retry = 0, pinger = 0, poller = 0, stopped = false;
    const subscribe = (q) => ws && ws.readyState === 1 && ws.send(JSON.stringify(view ? { action: "subscribe", queueId: q, view } : { action: "subscribe", queueId: q }));
    const follow = (id, token) => ws && ws.readyState === 1 && ws.send(JSON.stringify({ action: "subscribe", ticketId: id, token }));
    function open() {
      try {
        ws = new WebSocket(url);
      } catch {
        return down();
      }
      ws.onopen = () => {
        attempt = 0;
        clearInterval(poller);
        poller = 0;
        queues.forEach(subscribe);
        tickets.forEach((token, id) => follow(id, token));
        pinger = setInterval(() => ws && ws.readyState === 1 && ws.send("ping"), 25000);
      };
      ws.onmessage = (ev) => {
        let m = null;
        try { m = JSON.parse(ev.data); } catch { return; } // "pong"
        if (m && (m.type === "queue_update" || m.type === "board_update") && m.data) onUpdate(m.data, m.type);
        if (m && m.type === "ticket_update" && m.data && onTicket) onTicket(m.data);
      };
      ws.onclose = down;
    }
    function down() {
      clearInterval(pinger);
      ws = null;
      if (stopped) return;
      if (!poller) poller = setInterval(poll, 30000);
      const cap = Math.min(30000, 1000 * 2 ** attempt++);
      retry = setTimeout(open, cap / 2 + Math.random() * (cap / 2));
    }
    open();
    return {
      add(q) { if (!queues.has(q)) { queues.add(q); subscribe(q); } },
      follow(id, token) { tickets.set(id, token); follow(id, token); },
      unfollow(id) { if (tickets.delete(id) && ws && ws.readyState === 1) ws.send(JSON.stringify({ action: "unsubscribe", ticketId: id })); },
      connected: () => !!ws && ws.readyState === 1,
      stop() {
        stopped = true;
        clearTimeout(retry); clearInterval(poller); clearInterval(pinger);
        if (ws) { ws.onclose = null; ws.close(); }
      },
    };
  }

  let audio = null;
  /** Two short tones from an oscillator: no audio file to fetch. */
  function chime() {
    try {
      const a = audio;
      if (!a) return;
      // Suspended (no touch yet): a kiosk started with the autoplay flag resumes here; any
      // other browser refuses quietly, and the board still flashes.
      if (a.state !== "running") return void a.resume().then(() => { if (a.state === "running") chime(); }).catch(() => undefined);
      [880, 660].forEach((f, i) => {
        const t0 = a.currentTime + i * 0.25, osc = a.createOscillator(), gain = a.createGain();
        osc.frequency.value = f;
        gain.gain.setValueAtTime(0.0001, t0);
        gain.gain.exponentialRampToValueAtTime(0.3, t0 + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, t0 + 0.4);
        osc.connect(gain).connect(a.destination);
        osc.start(t0);
        osc.stop(t0 + 0.45);
      });
    } catch { /* no audio on this device: the board still flashes */ }
  }

  function mount(target, config) {
    const host = typeof target === "string" ? document.querySelector(target) : target;
    if (!host) return null;
    if (host.__queueWidget) host.__queueWidget.destroy();
    const o = options(host, config || {});
    const t = Object.assign({}, T.en, T[o.language], MORE.words[o.language], o.strings);
    const root = host.shadowRoot || host.attachShadow({ mode: "open" });
    const box = el("div", { class: `qw ${o.theme}${o.compact ? " compact" : ""}${o.type === "board" ? " board" : ""}`, lang: o.language, dir: o.dir, style: `--p:${o.primaryColor}` });
    const sr = el("div", { class: "sr", role: "status", "aria-live": "polite" });
    const body = el("div", { class: "body" }, el("p", { class: "lbl" }, t.loading));
    box.append(body, sr);
    root.replaceChildren(el("style", {}, CSS), box);
    const announce = (text) => { sr.textContent = text; };
    const showError = (text) => body.replaceChildren(el("p", { class: "msg err", role: "alert" }, text));
    let channel = null, pending = 0;
    let stopTicket = () => {};
    const instance = { destroy: () => { clearTimeout(pending); stopTicket(); if (channel) channel.stop(); } };
    host.__queueWidget = instance;

    if (o.type === "board") board();
    else if (o.type === "book") book();
    else queue();
    return instance;

    function queue() {
      if (!o.queueId) return showError(fmt(t.config, { what: "queueId" }));
      let last = null, logo = null, ticket = null, joinBusy = false;
      // The visitor's own ticket ({ticketId, token, queueId}), kept in localStorage so a reload
      // follows it again; `mine.data` is its last known state (docs/widget.md).
      const storeKey = `queueWidget:ticket:${o.queueId}`;
      // lateOff: the queue refused a later turn (docs/visits.md, defer); lateOpen: the choices are shown.
      let mine = null, ticketPoll = 0, lateOff = false, lateOpen = false;
      // The service's join-time questions (docs/widget.md), as the kiosk asks them: read once, answered in the form.
      let questions = [];
      const qs = el("div", { class: "qs" });
      const qLang = o.language === "fr" ? "fr" : "en";
      const qWord = { text: t.qText, number: t.qNumber, select: t.qSelect, date: t.qDate, phone: t.qPhone, email: t.qEmail, consent: t.qConsent };
      const joinMsg = el("p", { class: "msg err", role: "alert", hidden: true });
      const form = o.allowJoin ? joinForm() : null;

      if (o.showLogo && o.organizationId && o.apiKey) {
        api(o, "GET", `/v1/widget/organization/${enc(o.organizationId)}/info`, null, true)
          .then((info) => { if (info.logoUrl) { logo = info.logoUrl; if (last) render(last); } })
          .catch(() => { /* the logo is decoration: the status still shows */ });
      }

      function render(s) {
        const prev = last;
        last = s;
        const head = el("div", { class: "hd" },
          logo && el("img", { class: "logo", src: logo, alt: "" }),
          el("h2", { class: "nm" }, s.name),
          el("span", { class: `badge ${s.status}` }, t[s.status] || s.status));
        const stats = el("div", { class: "stats" },
          el("div", {}, el("div", { class: "lbl" }, t.waiting), el("div", { class: "big", "data-count": "" }, String(s.waitingCount))),
          o.showEstimatedWait && s.estimatedWaitMinutes != null &&
            el("div", {}, el("div", { class: "lbl" }, t.wait), el("div", { class: "big", "data-wait": "" }, fmt(t.min, { n: s.estimatedWaitMinutes }))),
          !o.compact && el("div", {}, el("div", { class: "lbl" }, t.serving),
            el("div", { class: "codes", "data-serving": "" },
              s.nowServing.length ? s.nowServing.map((c) => el("span", { class: "code" }, c)) : el("span", { class: "lbl" }, t.none))));
        const state = s.status === "paused" ? t.pausedMsg : s.status === "closed" ? t.closedMsg : null;
        body.replaceChildren(...[head, stats, state && el("p", { class: "msg", role: "note" }, state),
          ticket || (form && s.status === "active" && form), joinMsg].filter(Boolean));
        if (prev && s.nowServing[0] && s.nowServing[0] !== prev.nowServing[0]) announce(fmt(t.nowServing, { code: s.nowServing[0] }));
        else if (prev && prev.status !== s.status && state) announce(state);
      }

      async function refresh() {
        if (mine) readMine();
        try {
          render(await api(o, "GET", `/v1/widget/queue/${enc(o.queueId)}/status`));
        } catch (e) {
          // A live status already on screen stays; only a first failure replaces it.
          if (!last) showError(errorText(t, e, false));
        }
      }

      function stored() {
        try {
          const v = JSON.parse(localStorage.getItem(storeKey) || "null");
          return v && v.ticketId && v.token && v.queueId === o.queueId ? v : null;
        } catch { return null; }
      }
      function store(v) {
        try { if (v) localStorage.setItem(storeKey, JSON.stringify(v)); else localStorage.removeItem(storeKey); } catch { /* private mode */ }
      }

      /** Follows the visitor's ticket: over the socket, and by polling the read while the socket is down. */
      function followMine(v, initial) {
        mine = { ticketId: v.ticketId, token: v.token, data: initial || null };
        lateOff = lateOpen = false;
        store({ ticketId: v.ticketId, token: v.token, queueId: o.queueId });
        if (initial) showMine(initial);
        channel.follow(v.ticketId, v.token);
        readMine();
        clearInterval(ticketPoll);
        ticketPoll = setInterval(() => { if (mine && !channel.connected()) readMine(); }, 15000);
        stopTicket = () => clearInterval(ticketPoll);
      }

      async function readMine() {
        const m = mine;
        try {
          const data = await api(o, "GET", `/v1/widget/tickets/${enc(m.ticketId)}`, null, false, { "X-Ticket-Token": m.token });
          if (mine === m) showMine(data);
        } catch (e) {
          // The token dies with the ticket: a finished ticket reads as not found.
          if (e.code === "NOT_FOUND" && mine === m) endMine(m.data && !LIVE.includes(m.data.status) ? m.data : null);
        }
      }

      function endMine(data) {
        clearInterval(ticketPoll);
        if (mine) channel.unfollow(mine.ticketId);
        store(null);
        const m = mine;
        mine = null;
        const status = data ? data.status : null;
        const text = status === "served" ? t.served : status === "cancelled" ? t.left : status === "skipped" || status === "expired" ? t.missed : t.ended;
        const again = el("button", { type: "button" }, t.another);
        again.addEventListener("click", () => { ticket = null; if (last) render(last); });
        ticket = el("div", { class: "ticket done", "data-ticket": m ? m.ticketId : "", "data-state": status || "ended" },
          data && el("div", { class: "big", "data-code": "" }, data.displayCode),
          el("p", { class: "turnmsg" }, text), el("p", {}, again));
        if (last) render(last);
        announce(text);
      }

      function showMine(data) {
        if (!mine || data.ticketId !== mine.ticketId) return;
        const before = mine.data;
        mine.data = data;
        if (!LIVE.includes(data.status)) return endMine(data);
        const turn = data.status === "called" || data.status === "serving";
        // Set aside by the desk (docs/desks.md, hold): still the visitor's, not their turn now.
        const held = data.status === "held";
        const turnText = data.counter ? fmt(t.yourTurn, { counter: data.counter }) : t.yourTurnNow;
        const leave = el("button", { type: "button", class: "sec", "data-leave": "" }, t.leave);
        leave.addEventListener("click", leaveQueue);
        // "I'm running late": a later turn by 10, 15 or 30 minutes, and the time the ticket is back in line.
        const back = data.status === "waiting" && data.deferredUntil && Date.parse(data.deferredUntil) > Date.now()
          ? new Date(data.deferredUntil).toLocaleTimeString(o.locale, { hour: "2-digit", minute: "2-digit" }) : null;
        const late = data.status === "waiting" && !lateOff && el("p", { class: "codes", "data-late": "" },
          ...(lateOpen ? [10, 15, 30] : [0]).map((n) => {
            const b = el("button", { type: "button", class: "sec", "data-late-minutes": n || null }, n ? `+${n} min` : t.late);
            b.addEventListener("click", () => n ? runningLate(n) : ((lateOpen = true), showMine(mine.data)));
            return b;
          }));
        ticket = el("div", { class: `ticket${turn ? " turn" : ""}`, "data-ticket": data.ticketId, "data-state": data.status },
          el("div", { class: "lbl" }, t.ticket),
          el("div", { class: "big", "data-code": "" }, data.displayCode),
          turn ? el("p", { class: "turnmsg", role: "alert" }, turnText)
            : held ? el("p", { class: "turnmsg", "data-held": "" }, t.onHold)
            : data.position != null && el("div", { "data-position": "" }, fmt(t.position, { n: data.position })),
          !turn && o.showEstimatedWait && data.estimatedWaitMinutes != null && el("div", {}, `${t.wait} ${fmt(t.min, { n: data.estimatedWaitMinutes })}`),
          back && el("p", { "data-back": "" }, fmt(t.back, { time: back })), late,
          data.status !== "serving" && !held && leave);
        if (last) render(last);
        else body.replaceChildren(ticket);
        if (held && (!before || before.status !== "held")) announce(t.onHold);
        if (turn && (!before || (before.status !== "called" && before.status !== "serving"))) {
          announce(turnText);
          chime();
          try { if (navigator.vibrate) navigator.vibrate([300, 120, 300]); } catch { /* not allowed here */ }
        }
      }

      async function runningLate(n) {
        const m = mine;
        lateOpen = false;
        try {
          // A few seconds short, so a device clock a little ahead of the server's stays within the queue's bound.
          const until = new Date(Date.now() + n * 60000 - 15000).toISOString();
          const data = await api(o, "POST", `/v1/widget/tickets/${enc(m.ticketId)}/defer`, { until }, false, { "X-Ticket-Token": m.token });
          joinMsg.hidden = true;
          if (mine === m) showMine(data);
        } catch (e) {
          lateOff = e.code === "DEFER_LIMIT_REACHED";
          joinMsg.textContent = lateOff || e.code === "DEFER_TOO_FAR" ? t.lateNo : errorText(t, e, false);
          joinMsg.hidden = false;
          if (mine === m) showMine(m.data);
        }
      }

      async function leaveQueue() {
        const m = mine;
        if (!m) return;
        try {
          const data = await api(o, "POST", `/v1/widget/tickets/${enc(m.ticketId)}/cancel`, null, false, { "X-Ticket-Token": m.token });
          if (mine === m) endMine(data);
        } catch (e) {
          if (e.code === "NOT_FOUND" && mine === m) endMine(null);
          else { joinMsg.textContent = errorText(t, e, false); joinMsg.hidden = false; }
        }
      }

      function askQuestions() {
        api(o, "GET", `/v1/widget/queue/${enc(o.queueId)}/intake`, null, true).then((d) => {
          questions = d.fields.filter((q) => q.required !== "at_serve");
          qs.replaceChildren(...questions.map((q, i) => {
            const id = `qw-q${i}`, n = `intake.${q.key}`, label = `${q.label[qLang]}${q.required === "at_join" ? "" : ` ${t.qOptional}`}`;
            q.err = el("span", { class: "err-in", id: `${id}-e`, hidden: true });
            const attrs = { name: n, "aria-describedby": `${id}-e`, "aria-required": q.required === "at_join" ? "true" : null };
            if (q.type === "select") return (q.box = el("fieldset", { "data-question": q.key, "aria-describedby": `${id}-e` }, el("legend", {}, label),
              ...(q.options || []).map((c) => el("label", { class: "opt" }, el("input", { type: "radio", name: n, value: c.value }), c.label[qLang])), q.err));
            if (q.type === "consent") return (q.box = el("div", { "data-question": q.key }, el("label", { class: "opt" }, el("input", { ...attrs, type: "checkbox", value: "yes" }), label), q.err));
            const type = { number: "text", date: "date", phone: "tel", email: "email" }[q.type] || "text";
            return (q.box = el("label", { "data-question": q.key }, label, el("input", { ...attrs, type, maxlength: q.type === "text" ? "500" : null, autocomplete: "off" }), q.err));
          }));
        }).catch(() => { /* the join still goes; a refusal names the question */ });
      }
      /** The answers the form holds, and the first refused one (the API's rules, in the page's words). */
      function answers(f) {
        const data = new FormData(f), out = {};
        let bad = null;
        for (const q of questions) {
          const raw = String(data.get(`intake.${q.key}`) || "").trim();
          let v = q.type === "consent" ? raw === "yes" || undefined : raw === "" ? undefined : q.type === "number" ? Number(raw.replace(",", ".")) : q.type === "phone" ? raw.replace(/[\s.()-]/g, "") : raw;
          const wrong = v === undefined ? q.required === "at_join" && (q.type === "consent" ? t.qConsent : t.qRequired)
            : (q.type === "number" && !Number.isFinite(v)) || (q.type === "phone" && !/^\+[1-9]\d{6,14}$/.test(v)) ||
              (q.type === "email" && !/^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(v)) || (q.type === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(v)) ||
              (q.type === "text" && v.length > 500) ? qWord[q.type] : null;
          if (wrong && !bad) bad = { key: q.key, text: wrong };
          if (v !== undefined) out[q.key] = v;
        }
        return { out, bad };
      }
      /** A refused answer under its question (the refusal names `intake.<key>`); false when the form has no such question. */
      function refuseAnswer(key, text) {
        const q = questions.find((x) => x.key === key);
        if (!q) return false;
        q.err.textContent = text;
        q.err.hidden = false;
        const input = q.box.querySelector("input");
        if (q.type !== "select") input.setAttribute("aria-invalid", "true");
        input.focus();
        return true;
      }

      function joinForm() {
        const name = el("input", { name: "visitorName", autocomplete: "name", maxlength: "100" });
        const phone = el("input", { name: "phone", type: "tel", autocomplete: "tel", placeholder: "+33612345678" });
        const party = el("input", { name: "partySize", type: "number", min: "1", max: "50", value: "1" });
        const button = el("button", { type: "submit" }, t.join);
        const f = el("form", { novalidate: true },
          el("label", {}, t.name, name), el("label", {}, t.phone, phone), el("label", {}, t.party, party), qs, button);
        askQuestions();
        f.addEventListener("submit", async (ev) => {
          ev.preventDefault();
          if (joinBusy) return;
          for (const q of questions) { q.err.hidden = true; q.box.querySelectorAll("input").forEach((i) => i.removeAttribute("aria-invalid")); }
          const { out, bad } = answers(f);
          if (bad) return void refuseAnswer(bad.key, bad.text);
          const req = {};
          if (Object.keys(out).length) req.intake = out;
          if (name.value.trim()) req.visitorName = name.value.trim();
          if (phone.value.trim()) req.phone = phone.value.replace(/[\s().-]/g, "");
          if (party.value !== "") req.partySize = Number(party.value);
          // The ticket's texts (SMS, receipt) speak the language the visitor reads the widget in.
          req.language = o.language;
          joinBusy = button.disabled = true;
          // The click may start audio, so "your turn" can chime later (browsers need a gesture).
          try { audio = audio || new (window.AudioContext || window.webkitAudioContext)(); audio.resume(); } catch { audio = null; }
          button.textContent = t.sending;
          joinMsg.hidden = true;
          try {
            const created = await api(o, "POST", `/v1/widget/queue/${enc(o.queueId)}/join`, req, true);
            f.reset();
            showTicket(created);
          } catch (e) {
            const field = String((e.details && e.details.field) || "");
            if (field.startsWith("intake.")) {
              const q = questions.find((x) => x.key === field.slice(7));
              const text = !q ? t.qRequired : q.type === "consent" ? t.qConsent : /^is required/.test(e.details.reason || "") ? t.qRequired : qWord[q.type];
              if (refuseAnswer(field.slice(7), text)) return;
              askQuestions();
              e = { code: "", message: text };
            }
            joinMsg.textContent = /^(QUEUE_|OFFLINE|AUTH|KEY_)/.test(e.code) ? errorText(t, e, false) : fmt(t.joinFailed, { msg: errorText(t, e, false) });
            joinMsg.hidden = false;
          } finally {
            joinBusy = button.disabled = false;
            button.textContent = t.join;
          }
        });
        return f;
      }

      function showTicket(created) {
        if (created.ticketToken) {
          const { ticketToken, ...rest } = created;
          announce(fmt(t.yourTicket, { code: created.displayCode }));
          followMine({ ticketId: created.id, token: ticketToken }, {
            ticketId: created.id, queueId: o.queueId, queueName: last ? last.name : "", displayCode: created.displayCode, status: created.status,
            position: created.position, estimatedWaitMinutes: created.estimatedWaitMinutes, counter: null, calledAt: null,
          });
          host.dispatchEvent(new CustomEvent("queuewidget:ticket", { detail: rest }));
          optInPush(o, created.id);
          if (o.onTicketCreated) {
            try { o.onTicketCreated(rest); } catch (err) { console.error("onTicketCreated failed", err); }
          }
          return;
        }
        const again = el("button", { type: "button" }, t.another);
        ticket = el("div", { class: "ticket", "data-ticket": created.id },
          el("div", { class: "lbl" }, t.ticket),
          el("div", { class: "big", "data-code": "" }, created.displayCode),
          created.position != null && el("div", {}, fmt(t.position, { n: created.position })),
          o.showEstimatedWait && created.estimatedWaitMinutes != null && el("div", {}, `${t.wait} ${fmt(t.min, { n: created.estimatedWaitMinutes })}`),
          el("p", {}, again));
        again.addEventListener("click", () => { ticket = null; if (last) render(last); });
        if (last) render(last);
        announce(fmt(t.yourTicket, { code: created.displayCode }));
        host.dispatchEvent(new CustomEvent("queuewidget:ticket", { detail: created }));
        optInPush(o, created.id);
        if (o.onTicketCreated) {
          try { o.onTicketCreated(created); } catch (err) { console.error("onTicketCreated failed", err); }
        }
      }

      channel = live(o, (s) => { if (s.queueId === o.queueId) render(s); }, refresh, o.queueId, null, showMine);
      channel.add(o.queueId);
      const kept = stored();
      if (kept) followMine(kept, null);
      refresh();
    }

    // Booking mode (type "book", docs/widget.md): service, day, slot (held while the visitor types),
    // details, then the confirmation with the kiosk's check-in code and the manage link.
    function book() {
      if (!o.locationId) return showError(fmt(t.config, { what: "locationId" }));
      if (!o.apiKey) return showError(fmt(t.config, { what: "apiKey" }));
      const locale = o.locale;
      let place = null; // the location's kiosk info: name, timezone, services
      let offers = []; // [{serviceId, serviceName, slots}] of services that take appointments
      let choice = { service: null, day: null, slot: null, hold: null };
      const dayKey = (iso) => new Intl.DateTimeFormat("en-CA", { timeZone: place.timezone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(iso));
      const dayText = (iso) => new Intl.DateTimeFormat(locale, { timeZone: place.timezone, weekday: "long", day: "numeric", month: "long" }).format(new Date(iso));
      const timeText = (iso) => new Intl.DateTimeFormat(locale, { timeZone: place.timezone, hour: "2-digit", minute: "2-digit" }).format(new Date(iso));
      const whenText = (iso) => `${dayText(iso)}, ${timeText(iso)}`;

      function step(title, ...kids) {
        const h = el("h3", { tabindex: "-1" }, title);
        const back = el("button", { type: "button", class: "sec", "data-back": "" }, t.bookBack);
        body.replaceChildren(el("div", { class: "bk" },
          el("div", { class: "hd" }, el("h2", { class: "nm" }, place ? `${t.bookTitle} — ${place.name}` : t.bookTitle)),
          h, ...kids.filter(Boolean), backTo() && back));
        back.addEventListener("click", () => { const to = backTo(); if (to) to(); });
        h.focus();
        announce(title);
      }
      function backTo() {
        if (choice.slot) return () => { release(); choice.slot = null; slots(); };
        if (choice.day) return () => { choice.day = null; days(); };
        if (choice.service && offers.length > 1) return () => { choice.service = null; servicesStep(); };
        return null;
      }
      function release() { choice.hold = null; } // an unused hold simply expires after 5 minutes

      async function load() {
        try {
          place = await api(o, "GET", `/v1/widget/locations/${enc(o.locationId)}/kiosk`, null, true);
        } catch (e) { return showError(errorText(t, e, false)); }
        const seen = new Map();
        for (const q of place.queues) if (!seen.has(q.serviceId) && (!o.services || o.services.includes(q.serviceId))) seen.set(q.serviceId, q.serviceName);
        const from = new Date().toISOString(), to = new Date(Date.now() + 14 * 86400000).toISOString();
        const found = await Promise.all([...seen].map(async ([serviceId, serviceName]) => {
          try {
            const list = await api(o, "GET", `/v1/services/${enc(serviceId)}/slots?locationId=${enc(o.locationId)}&from=${enc(from)}&to=${enc(to)}`, null, true);
            return { serviceId, serviceName, slots: list.filter((s) => s.remaining > 0) };
          } catch { return null; } // not bookable (400 not_bookable) or gone: not offered
        }));
        offers = found.filter(Boolean);
        if (!offers.length) return showError(t.bookNoService);
        if (offers.length === 1) { choice.service = offers[0]; days(); } else servicesStep();
      }

      function servicesStep() {
        const list = el("div", { class: "picks wide" }, ...offers.map((s) => {
          const b = el("button", { type: "button", class: "pick", "data-service": s.serviceId }, s.serviceName);
          b.addEventListener("click", () => { choice.service = s; days(); });
          return b;
        }));
        step(t.bookService, list);
      }

      function days() {
        const byDay = new Map();
        for (const s of choice.service.slots) { const k = dayKey(s.start); if (!byDay.has(k)) byDay.set(k, s.start); }
        if (!byDay.size) return step(t.bookDay, el("p", { class: "msg", role: "note" }, t.bookNoSlot));
        const list = el("div", { class: "picks" }, ...[...byDay].map(([k, first]) => {
          const b = el("button", { type: "button", class: "pick", "data-day": k }, dayText(first));
          b.addEventListener("click", () => { choice.day = k; slots(); });
          return b;
        }));
        step(t.bookDay, el("p", { class: "chosen" }, choice.service.serviceName), list);
      }

      function slots(note) {
        const list = el("div", { class: "picks" }, ...choice.service.slots.filter((s) => dayKey(s.start) === choice.day).map((s) => {
          const b = el("button", { type: "button", class: "pick", "data-slot": s.start }, timeText(s.start));
          b.addEventListener("click", () => take(s, b));
          return b;
        }));
        const first = choice.service.slots.find((s) => dayKey(s.start) === choice.day);
        step(t.bookSlot, el("p", { class: "chosen" }, `${choice.service.serviceName} — ${first ? dayText(first.start) : ""}`),
          note && el("p", { class: "msg err", role: "alert" }, note), list);
      }

      async function take(slot, button) {
        button.disabled = true;
        try {
          choice.hold = await api(o, "POST", "/v1/appointments/holds", { serviceId: choice.service.serviceId, locationId: o.locationId, start: slot.start }, true);
          choice.slot = slot;
          details();
        } catch (e) {
          button.disabled = false;
          if (e.code === "SLOT_UNAVAILABLE") { choice.service.slots = choice.service.slots.filter((s) => s !== slot); slots(t.bookTaken); }
          else slots(errorText(t, e, false));
        }
      }

      function details(note) {
        const problem = (id) => el("span", { class: "err-in", id, hidden: true });
        const name = el("input", { name: "name", autocomplete: "name", maxlength: "120", required: true, "aria-describedby": "bk-name-err" });
        const phone = el("input", { name: "phone", type: "tel", autocomplete: "tel", placeholder: "+33612345678", "aria-describedby": "bk-phone-err" });
        const email = el("input", { name: "email", type: "email", autocomplete: "email", "aria-describedby": "bk-email-err" });
        // The languages the business offers (the kiosk info's list), each in its own name.
        const listed = place && Array.isArray(place.languages) ? place.languages : LANGS;
        const offered = LANGS.filter((l) => listed.includes(l));
        const lang = el("select", { name: "language" }, offered.map((l) => el("option", { value: l, lang: l }, MORE.names[l] || l)));
        lang.value = [o.language, place && place.defaultLanguage].find((l) => offered.includes(l)) || offered[0] || o.language;
        const errs = { name: problem("bk-name-err"), phone: problem("bk-phone-err"), email: problem("bk-email-err") };
        const button = el("button", { type: "submit" }, t.bookConfirm);
        const f = el("form", { novalidate: true },
          el("label", {}, t.bookName, name, errs.name), el("label", {}, t.bookPhone, phone, errs.phone),
          el("label", {}, t.bookEmail, email, errs.email), el("label", {}, t.bookLang, lang), button);
        // A refusal under a field goes as soon as the visitor changes that field.
        for (const [field, input] of [["name", name], ["phone", phone], ["email", email]]) {
          input.addEventListener("input", () => { errs[field].hidden = true; input.removeAttribute("aria-invalid"); });
        }
        const say = (field, text) => {
          errs[field].textContent = text; errs[field].hidden = false;
          const input = { name, phone, email }[field];
          input.setAttribute("aria-invalid", "true");
          input.focus();
        };
        f.addEventListener("submit", async (ev) => {
          ev.preventDefault();
          for (const k of Object.keys(errs)) { errs[k].hidden = true; }
          for (const i of [name, phone, email]) i.removeAttribute("aria-invalid");
          const rawPhone = phone.value.replace(/[\s().-]/g, "");
          if (!name.value.trim()) return say("name", t.bookNameMissing);
          if (rawPhone && !/^\+[1-9]\d{6,14}$/.test(rawPhone)) return say("phone", t.bookPhoneBad);
          if (email.value.trim() && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.value.trim())) return say("email", t.bookEmailBad);
          button.disabled = true;
          button.textContent = t.sending;
          const customer = { name: name.value.trim(), language: lang.value };
          if (rawPhone) customer.phone = rawPhone;
          if (email.value.trim()) customer.email = email.value.trim();
          try {
            const booked = await api(o, "POST", "/v1/appointments", {
              serviceId: choice.service.serviceId, locationId: o.locationId, start: choice.slot.start, holdId: choice.hold.id, customer,
            }, true);
            done(booked);
          } catch (e) {
            button.disabled = false;
            button.textContent = t.bookConfirm;
            const field = e.details && e.details.field;
            if (field === "customer.phone") return say("phone", t.bookPhoneBad);
            if (field === "customer.email") return say("email", t.bookEmailBad);
            if (field === "customer.name") return say("name", t.bookNameMissing);
            if (e.code === "SLOT_UNAVAILABLE" || field === "holdId") {
              const gone = choice.slot;
              choice.service.slots = choice.service.slots.filter((s) => s !== gone);
              choice.slot = null; choice.hold = null;
              return slots(t.bookTaken);
            }
            details(errorText(t, e, false));
          }
        });
        step(t.bookDetails,
          el("p", { class: "chosen" }, fmt(t.bookWith, { service: choice.service.serviceName, when: whenText(choice.slot.start) })),
          el("p", { class: "msg", role: "note" }, t.bookHeld),
          note && el("p", { class: "msg err", role: "alert" }, note), f);
      }

      function done(booked) {
        const manage = `${o.apiBase}/appointments/${enc(booked.id)}#token=${enc(booked.manageToken)}`;
        const again = el("button", { type: "button", class: "sec" }, t.bookAnother);
        again.addEventListener("click", () => { choice = { service: null, day: null, slot: null, hold: null }; body.replaceChildren(el("p", { class: "lbl" }, t.loading)); load(); });
        const card = el("div", { class: "ticket", "data-appointment": booked.id },
          el("div", { class: "lbl" }, t.bookCode),
          el("p", { class: "bkcode", "data-code": "" }, booked.checkInCode),
          el("p", {}, t.bookCodeHint),
          el("p", {}, el("a", { href: manage, target: "_blank", rel: "noopener", "data-manage": "" }, t.bookManage)),
          again);
        step(t.bookDone, el("p", { class: "chosen", "data-when": "" }, fmt(t.bookWith, { service: choice.service.serviceName, when: whenText(booked.start) })), card);
        choice = { service: choice.service, day: null, slot: null, hold: null };
        body.querySelector("[data-back]")?.remove();
        host.dispatchEvent(new CustomEvent("queuewidget:appointment", { detail: { id: booked.id, start: booked.start, checkInCode: booked.checkInCode } }));
      }

      load();
    }

    // The display board lives in its own script (board.js), so pages with a status or join
    // widget do not download it: the board page loads it first, anywhere else it is fetched here.
    function board() {
      if (!o.organizationId) return showError(fmt(t.config, { what: "organizationId" }));
      const kit = {
        o, t, el, fmt, enc, api, live, chime, errorText, host, root, box, body, announce, showError, instance,
        audio: () => { try { audio = audio || new (window.AudioContext || window.webkitAudioContext)(); } catch { audio = null; } return audio; },
        setChannel: (c) => { channel = c; },
        hasChannel: () => channel !== null,
      };
      if (window.QueueWidgetBoard) return window.QueueWidgetBoard(kit);
      const script = el("script", { src: `${scriptOrigin}/v1/board.js` });
      script.addEventListener("load", () => window.QueueWidgetBoard ? window.QueueWidgetBoard(kit) : showError(t.failed));
      script.addEventListener("error", () => showError(t.offline));
      document.head.append(script);
    }
  }

  window.QueueWidget = { mount };
  const auto = () => {
    const config = window.QueueWidgetConfig || {};
    mount(config.target || "#widget", config);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", auto);
  else auto();
})();

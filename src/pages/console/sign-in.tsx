// The sign-in form (POST /v1/auth/login), or "Sign in with your organization": the browser goes
// through the organization's identity provider (GET /v1/auth/sso/start?email&returnTo=/console)
// and comes back here signed in, or with `?sso_error=` saying why not (docs/sso.md). Either way
// the session cookie is the console's credential.
import { useState } from "hono/jsx/dom";
import type { PageLang } from "../shared/i18n";
import { post } from "./client";
import type { ConsoleText } from "./i18n";
import { refusalText } from "./refusal";

/** The reason a sign-in through the organization came back with, once (the address is cleaned). */
function takeSsoError(): string | null {
  const url = new URL(window.location.href);
  const reason = url.searchParams.get("sso_error");
  if (!reason) return null;
  url.searchParams.delete("sso_error");
  window.history.replaceState(null, "", `${url.pathname}${url.search}${url.hash}`);
  return reason;
}

export function SignIn({ t, onDone, lang }: { t: ConsoleText; lang: PageLang; onDone: () => void }) {
  const [error, setError] = useState<string | null>(() => {
    const reason = takeSsoError();
    return reason === null ? null : reason === "not_configured" ? t.ssoNotConfigured : `${t.ssoFailed} (${reason})`;
  });
  const withOrganization = (e: Event) => {
    const form = (e.currentTarget as HTMLButtonElement).form!;
    const email = (form.elements.namedItem("email") as HTMLInputElement).value.trim();
    if (!email || !email.includes("@")) {
      setError(t.ssoNeedsEmail);
      (form.elements.namedItem("email") as HTMLInputElement).focus();
      return;
    }
    setBusy(true);
    // Back to this very page (its language too); takeSsoError already removed an old sso_error.
    const returnTo = `${window.location.pathname}${window.location.search}`;
    window.location.assign(`/v1/auth/sso/start?email=${encodeURIComponent(email)}&returnTo=${encodeURIComponent(returnTo)}`);
  };
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await post("/v1/auth/login", {}, { email: String(form.get("email")), password: String(form.get("password")) });
      onDone();
    } catch (err) {
      setError(refusalText(err, lang));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="signin card" aria-labelledby="signin-title">
      <h1 id="signin-title">{t.title}</h1>
      <form onSubmit={submit}>
        <label>
          {t.email}
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        <label>
          {t.password}
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        <button class="primary" type="submit" disabled={busy}>
          {t.signIn}
        </button>
        <p class="sso-or">{t.ssoOr}</p>
        <button type="button" class="sso" onClick={withOrganization} disabled={busy}>
          {t.ssoSignIn}
        </button>
      </form>
    </section>
  );
}

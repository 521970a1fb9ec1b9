// Dated API versions (issue #32, Stripe's model; the list and what each changed is
// docs/changelog.md). A version is the date its change shipped; a client names one in the
// `Queue-Version` header, else its key answers in the version current when the key was created.

/** Every version, oldest first. */
export const API_VERSIONS = ["2026-11-01", "2026-11-26", "2026-11-28"] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

export const FIRST_API_VERSION: ApiVersion = API_VERSIONS[0];
export const CURRENT_API_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1]!;

export function isApiVersion(value: string): value is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(value);
}

/** Events, webhook deliveries and GET /v1/events carry the masked phone and no e-mail unless asked (issue 40). */
export const PERSONAL_DATA_VERSION: ApiVersion = "2026-11-28";

/** Versions are ISO dates: their text order is their time order. */
export function isBefore(version: ApiVersion, change: ApiVersion): boolean {
  return version < change;
}

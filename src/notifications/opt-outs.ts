import type { Env } from "../env";

// STOP and START (docs/conversations.md): a number that sent STOP to an organization gets no
// SMS, WhatsApp nor push about its tickets from that organization until it sends START. Kept
// per organization, because the same person may still want another business's messages.

/** The bare form every phone is compared in: "+33 6 12.34(56)78" → "+33612345678". */
export function barePhone(phone: string): string {
  return phone.replace(/[\s().-]/g, "");
}

export async function optOut(env: Env, organizationId: string, phone: string, channel: string, at: number): Promise<void> {
  await env.DB.prepare("INSERT INTO opt_outs (organization_id, phone, channel, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(organizationId, barePhone(phone), channel, at)
    .run();
}

export async function optIn(env: Env, organizationId: string, phone: string): Promise<void> {
  await env.DB.prepare("DELETE FROM opt_outs WHERE organization_id = ? AND phone = ?").bind(organizationId, barePhone(phone)).run();
}

export async function isOptedOut(env: Env, organizationId: string, phone: string): Promise<boolean> {
  const row = await env.DB.prepare("SELECT 1 AS ok FROM opt_outs WHERE organization_id = ? AND phone = ?")
    .bind(organizationId, barePhone(phone))
    .first();
  return row !== null;
}

/** Of these (organization, phone) pairs, the ones opted out, as "org|phone" keys; one indexed D1 read. */
export async function optedOutAmong(env: Env, pairs: { organizationId: string; phone: string }[]): Promise<Set<string>> {
  const unique = [
    ...new Map(pairs.map((p) => [`${p.organizationId}|${barePhone(p.phone)}`, [p.organizationId, barePhone(p.phone)]])).values(),
  ]
    // At most 100 bound values per statement.
    .slice(0, 50);
  if (unique.length === 0) return new Set();
  const rows = await env.DB.prepare(
    `SELECT organization_id, phone FROM opt_outs WHERE (organization_id, phone) IN (VALUES ${unique.map(() => "(?, ?)").join(", ")})`,
  )
    .bind(...unique.flat())
    .all<{ organization_id: string; phone: string }>();
  return new Set(rows.results.map((r) => `${r.organization_id}|${r.phone}`));
}

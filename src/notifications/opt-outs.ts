import { and, eq, or } from "drizzle-orm";
import { optOuts } from "../db/schema";
import type { Deps } from "../http/deps";

// STOP and START (docs/conversations.md): a number that sent STOP to an organization gets no
// SMS, WhatsApp nor push about its tickets from that organization until it sends START. Kept
// per organization, because the same person may still want another business's messages.

/** The bare form every phone is compared in: "+33 6 12.34(56)78" → "+33612345678". */
export function barePhone(phone: string): string {
  return phone.replace(/[\s().-]/g, "");
}

export async function optOut({ db }: Deps, organizationId: string, phone: string, channel: string, at: number): Promise<void> {
  await db
    .insert(optOuts)
    .values({ organizationId, phone: barePhone(phone), channel, createdAt: at })
    .onConflictDoNothing();
}

export async function optIn({ db }: Deps, organizationId: string, phone: string): Promise<void> {
  await db.delete(optOuts).where(and(eq(optOuts.organizationId, organizationId), eq(optOuts.phone, barePhone(phone))));
}

export async function isOptedOut({ db }: Deps, organizationId: string, phone: string): Promise<boolean> {
  const row = await db
    .select({ phone: optOuts.phone })
    .from(optOuts)
    .where(and(eq(optOuts.organizationId, organizationId), eq(optOuts.phone, barePhone(phone))))
    .get();
  return row !== undefined;
}

/** Of these (organization, phone) pairs, the ones opted out, as "org|phone" keys; one indexed D1 read. */
export async function optedOutAmong({ db }: Deps, pairs: { organizationId: string; phone: string }[]): Promise<Set<string>> {
  const byKey = new Map<string, { organizationId: string; phone: string }>();
  for (const p of pairs) {
    const phone = barePhone(p.phone);
    byKey.set(`${p.organizationId}|${phone}`, { organizationId: p.organizationId, phone });
  }
  // At most 100 bound values per statement.
  const unique = [...byKey.values()].slice(0, 50);
  if (unique.length === 0) return new Set();
  const rows = await db
    .select({ organizationId: optOuts.organizationId, phone: optOuts.phone })
    .from(optOuts)
    .where(or(...unique.map((p) => and(eq(optOuts.organizationId, p.organizationId), eq(optOuts.phone, p.phone)))));
  return new Set(rows.map((r) => `${r.organizationId}|${r.phone}`));
}

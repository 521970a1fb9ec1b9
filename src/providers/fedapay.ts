// FedaPay (XOF, WAEMU zone): a small fetch client (the official SDK uses XMLHttpRequest through
// axios and fails once deployed). FedaPay has no recurring payments: one approved transaction
// pays one period. A webhook is never trusted on its own: the transaction is read back from the
// API before a plan is granted.
import { checkSignedHeader } from "../lib/signed-header";
import type { BillingChange, CheckoutRequest, CheckoutSession, ProviderEvent } from "./billing";

export interface FedaPayConfig {
  FEDAPAY_SECRET_KEY?: string;
  FEDAPAY_WEBHOOK_SECRET?: string;
  /** Default https://sandbox-api.fedapay.com/v1 (live: https://api.fedapay.com/v1). */
  FEDAPAY_API_BASE?: string;
}

export const FEDAPAY_SIGNATURE_HEADER = "X-FEDAPAY-SIGNATURE";

type Loose = Record<string, any>;

export interface FedaPayTransaction {
  id: string;
  status: string;
  amount: number;
  currency: string | null;
  checkoutId: string | null;
}

function base(config: FedaPayConfig): string {
  return (config.FEDAPAY_API_BASE ?? "https://sandbox-api.fedapay.com/v1").replace(/\/+$/, "");
}

async function call(config: FedaPayConfig, method: string, path: string, body?: unknown): Promise<Loose> {
  const res = await fetch(`${base(config)}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${config.FEDAPAY_SECRET_KEY ?? ""}`,
      Accept: "application/json",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`FedaPay ${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return text ? (JSON.parse(text) as Loose) : {};
}

/** A transaction answer may be flat or wrapped under a "v1/transaction" key. */
function transactionOf(answer: Loose): Loose {
  return (answer["v1/transaction"] ?? answer.transaction ?? answer) as Loose;
}

function metadataOf(tx: Loose): Loose {
  const raw = tx.custom_metadata;
  if (typeof raw === "string") {
    try {
      return JSON.parse(raw) as Loose;
    } catch {
      return {};
    }
  }
  return (raw ?? {}) as Loose;
}

function describe(tx: Loose): FedaPayTransaction {
  return {
    id: String(tx.id),
    status: String(tx.status ?? ""),
    amount: Number(tx.amount),
    currency: tx.currency?.iso ?? (typeof tx.currency === "string" ? tx.currency : null),
    checkoutId: typeof metadataOf(tx).checkoutId === "string" ? metadataOf(tx).checkoutId : null,
  };
}

export async function createFedaPayCheckout(config: FedaPayConfig, req: CheckoutRequest): Promise<CheckoutSession> {
  const created = transactionOf(
    await call(config, "POST", "/transactions", {
      description: `${req.organizationName}: ${req.plan} plan (${req.billingInterval})`,
      amount: req.amount,
      currency: { iso: "XOF" },
      callback_url: req.returnUrl,
      ...(req.customerEmail ? { customer: { email: req.customerEmail } } : {}),
      custom_metadata: {
        checkoutId: req.checkoutId,
        organizationId: req.organizationId,
        plan: req.plan,
        billingInterval: req.billingInterval,
      },
    }),
  );
  if (created.id === undefined || created.id === null) throw new Error("FedaPay created a transaction without an id");
  const token = await call(config, "POST", `/transactions/${encodeURIComponent(String(created.id))}/token`);
  if (typeof token.url !== "string") throw new Error("FedaPay answered a payment token without a url");
  return { url: token.url, providerRef: String(created.id) };
}

export async function readFedaPayTransaction(config: FedaPayConfig, id: string): Promise<FedaPayTransaction> {
  return describe(transactionOf(await call(config, "GET", `/transactions/${encodeURIComponent(id)}`)));
}

/**
 * Verifies X-FEDAPAY-SIGNATURE (`t=…,s=…`, 5-minute window at `atMs`) on the raw body and parses
 * the event. An approved transaction is read back from the API; only what the API says counts.
 */
export async function parseFedaPayEvent(
  config: FedaPayConfig,
  rawBody: string,
  signature: string | undefined,
  atMs: number,
): Promise<ProviderEvent | null> {
  if (!config.FEDAPAY_WEBHOOK_SECRET) return null;
  if ((await checkSignedHeader(signature, config.FEDAPAY_WEBHOOK_SECRET, rawBody, atMs, "s")) !== null) return null;
  let event: Loose;
  try {
    event = JSON.parse(rawBody) as Loose;
  } catch {
    return null;
  }
  const name = String(event.name ?? event.type ?? "");
  const entity = (event.entity ?? event.data?.object ?? {}) as Loose;
  const transactionId = entity.id === undefined ? null : String(entity.id);
  const id = String(event.id ?? `${name}:${transactionId}`);
  const created = Date.parse(String(event.created_at ?? entity.updated_at ?? ""));
  const createdAt = Number.isNaN(created) ? atMs : created;
  let change: BillingChange = { kind: "ignored" };
  if (transactionId && name === "transaction.approved") {
    const tx = await readFedaPayTransaction(config, transactionId);
    if (tx.status === "approved" || tx.status === "transferred") {
      change = {
        kind: "checkout_paid",
        checkoutId: tx.checkoutId,
        providerRef: tx.id,
        providerSubscriptionId: null,
        invoiceRef: tx.id,
        periodStart: null,
        periodEnd: null,
        paidAmount: tx.amount,
      };
    }
  } else if (transactionId && (name === "transaction.declined" || name === "transaction.canceled")) {
    change = { kind: "checkout_failed", checkoutId: describe(entity).checkoutId, providerRef: transactionId };
  }
  return { provider: "fedapay", id, type: name, createdAt, change };
}

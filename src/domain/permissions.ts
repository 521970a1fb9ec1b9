// Roles and API-key scopes → permissions (CONTRACT §2). The README prints these tables.

export const ROLES = ["owner", "admin", "manager", "operator"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  "ORG_MANAGE",
  "ORG_DELETE",
  "ORG_TRANSFER",
  "LOCATION_MANAGE",
  "SERVICE_MANAGE",
  "QUEUE_MANAGE",
  "SERVICE_VIEW",
  "QUEUE_VIEW",
  "CALENDAR_VIEW",
  "QUEUE_OPERATE",
  "CALENDAR_MANAGE",
  "CALENDAR_CREATE_OWN_AVAILABILITY",
  "ANALYTICS_VIEW",
  "WEBHOOK_MANAGE",
  "WIDGET",
  "AUDIT_VIEW",
  // Full phone numbers and e-mails in GET /v1/events (issue 40): only a key given read:personal_data.
  "PERSONAL_DATA_VIEW",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const STAFF: Permission[] = ["SERVICE_VIEW", "QUEUE_VIEW", "CALENDAR_VIEW", "QUEUE_OPERATE", "CALENDAR_CREATE_OWN_AVAILABILITY", "WIDGET"];
const MANAGER: Permission[] = [...STAFF, "LOCATION_MANAGE", "SERVICE_MANAGE", "QUEUE_MANAGE", "CALENDAR_MANAGE", "ANALYTICS_VIEW"];
const ADMIN: Permission[] = [...MANAGER, "ORG_MANAGE", "WEBHOOK_MANAGE", "AUDIT_VIEW"];
const OWNER: Permission[] = [...ADMIN, "ORG_DELETE", "ORG_TRANSFER"];

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(OWNER),
  admin: new Set(ADMIN),
  manager: new Set(MANAGER),
  operator: new Set(STAFF),
};

export const SCOPES = [
  "read:services",
  "write:services",
  "read:queues",
  "write:queues",
  "read:analytics",
  "manage:webhooks",
  "widget",
  "read:audit",
  "read:personal_data",
] as const;
export type Scope = (typeof SCOPES)[number];

/** A write scope includes the matching read: a key that may create a thing may read it back. */
export const SCOPE_PERMISSIONS: Record<Scope, readonly Permission[]> = {
  "read:services": ["SERVICE_VIEW"],
  "write:services": ["SERVICE_VIEW", "SERVICE_MANAGE", "LOCATION_MANAGE"],
  "read:queues": ["QUEUE_VIEW"],
  "write:queues": ["QUEUE_VIEW", "QUEUE_MANAGE", "QUEUE_OPERATE"],
  "read:analytics": ["ANALYTICS_VIEW"],
  "manage:webhooks": ["WEBHOOK_MANAGE"],
  widget: ["WIDGET"],
  // The audit log names people and addresses: never part of the `read` shorthand, asked for by name.
  "read:audit": ["AUDIT_VIEW"],
  // Visitors' full phone numbers and e-mails in events (issue 40): in no shorthand, not even `admin`.
  "read:personal_data": ["PERSONAL_DATA_VIEW"],
};

/** Scopes only ever granted by name: `admin` does not include them. */
const NAMED_ONLY: readonly Scope[] = ["read:personal_data"];

export const KEY_PERMISSION_VALUES = [...SCOPES, "read", "write", "admin"] as const;
export type KeyPermission = (typeof KEY_PERMISSION_VALUES)[number];

const READ_SCOPES: Scope[] = ["read:services", "read:queues", "read:analytics"];
const WRITE_SCOPES: Scope[] = [...READ_SCOPES, "write:services", "write:queues"];

/**
 * What an API key may do. `read`/`write` are shorthands for scope sets; `admin` is what the
 * admin role may do, plus every scope. A key with no permissions gets `read`.
 */
export function keyPermissions(values: readonly string[]): Set<Permission> {
  const granted = new Set<Permission>();
  const list = values.length === 0 ? ["read"] : values;
  for (const value of list) {
    if (value === "admin") {
      for (const p of ROLE_PERMISSIONS.admin) granted.add(p);
      for (const scope of SCOPES) if (!NAMED_ONLY.includes(scope)) for (const p of SCOPE_PERMISSIONS[scope]) granted.add(p);
      continue;
    }
    const scopes: Scope[] =
      value === "read"
        ? READ_SCOPES
        : value === "write"
          ? WRITE_SCOPES
          : (SCOPES as readonly string[]).includes(value)
            ? [value as Scope]
            : [];
    for (const scope of scopes) for (const p of SCOPE_PERMISSIONS[scope]) granted.add(p);
  }
  return granted;
}

export function roleAllows(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

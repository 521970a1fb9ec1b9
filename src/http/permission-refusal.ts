import { KEY_PERMISSION_VALUES, keyPermissions, ROLES, roleAllows, type Permission, type Role } from "../domain/permissions";
import { ApiError } from "./errors";

// A 403 names what a person can act on (issue 39): the key scopes they can create
// (`manage:webhooks`) or the roles that may act, not the internal permission (WEBHOOK_MANAGE),
// which stays in `details.permission` for logs and support.

/** The key values (scopes, then the read/write/admin shorthands) and the roles that grant one of `permissions`. */
export function grantsOf(permissions: readonly Permission[]): { scopes: string[]; roles: Role[] } {
  const scopes = KEY_PERMISSION_VALUES.filter((value) => permissions.some((p) => keyPermissions([value]).has(p)));
  const roles = ROLES.filter((role) => permissions.some((p) => roleAllows(role, p)));
  return { scopes: [...scopes], roles: [...roles] };
}

/** The AUTHORIZATION_ERROR for a caller (a key, or a member with a role) that lacks every one of `permissions`. */
export function permissionRefused(
  needed: Permission | readonly Permission[],
  caller: { apiKeyId: string | null; role: Role | null },
): ApiError {
  const permissions = typeof needed === "string" ? [needed] : [...needed];
  const { scopes, roles } = grantsOf(permissions);
  let message: string;
  if (caller.apiKeyId !== null) {
    const [first, ...rest] = scopes;
    message =
      first === undefined
        ? `No API key can do this: sign in as ${roles.join(" or ")}`
        : `This API key cannot do this: it needs a key with ${first}${rest.length ? ` (or ${rest.join(", ")})` : ""}`;
  } else {
    message = `Your role${caller.role ? ` (${caller.role})` : ""} cannot do this: it needs ${roles.length ? roles.join(" or ") : "another role"}`;
  }
  return new ApiError("AUTHORIZATION_ERROR", message, { permission: permissions.join(" or "), scopes, roles });
}

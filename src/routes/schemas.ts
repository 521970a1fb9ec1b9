import { z } from "@hono/zod-openapi";

// Request and record schemas shared across areas. Bodies are strict: an unknown field is a
// VALIDATION_ERROR, so nothing can be set through a body that does not name it.

export const Language = z.enum(["fr", "en"]);

/** The one phone rule of every route that takes a customer's phone (SMS needs E.164). */
export const E164_PHONE = /^\+[1-9][0-9]{6,14}$/;
export const CustomerPhone = z
  .string()
  .regex(E164_PHONE, "an E.164 phone number: + then country code and number, no spaces, e.g. +33612345678")
  .openapi({ example: "+33612345678" });
export const Email = z
  .email()
  .max(254)
  .transform((v) => v.toLowerCase());
export const OrganizationType = z.enum(["retail", "healthcare", "banking", "government", "other"]);
export const RoleSchema = z.enum(["owner", "admin", "manager", "operator"]);

export const UserRecord = z
  .object({
    id: z.string(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    role: z.enum(["user", "admin"]),
    accountType: z.enum(["business", "customer"]),
    language: Language,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("User");

export const SessionRecord = z.object({ token: z.string(), expiresAt: z.string() }).openapi("Session");

export const MembershipRecord = z.object({ organizationId: z.string(), role: RoleSchema }).openapi("Membership");

import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { acceptInvitation, createCatalog, createOrganization, registerUser } from "../helpers/fixtures";

// Issue 40: GET /v1/auth/me shows each membership's locations (null = the whole organization).

describe("GET /v1/auth/me", () => {
  it("lists each membership with its locations: a scoped manager's ids, null for the whole organization", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    const { locationId } = await createCatalog(owner, org.id);
    const manager = await registerUser();
    expectOk(
      await call("POST", `/v1/organizations/${org.id}/members`, {
        token: owner.token,
        body: { email: manager.email, role: "manager", locationIds: [locationId] },
      }),
      202,
    );
    await acceptInvitation(manager, org.id);

    const mine = expectOk(await call("GET", "/v1/auth/me", { token: manager.token }));
    expect(mine.memberships).toEqual([{ organizationId: org.id, role: "manager", locationIds: [locationId] }]);
    const owners = expectOk(await call("GET", "/v1/auth/me", { token: owner.token }));
    expect(owners.memberships).toEqual([{ organizationId: org.id, role: "owner", locationIds: null }]);
  });
});

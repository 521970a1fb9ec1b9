import { Language } from "../http/schemas";
import { createRoute, z } from "@hono/zod-openapi";
import { errors, idParam, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { kioskInfo } from "./kiosk";
import { widgetActor } from "./widget.routes";
import { deps } from "../http/deps";

// The ticket kiosk's one read (the /kiosk page, docs/pages.md): a widget key may call only the
// widget routes, and none of them names a location's services.
const app = router();

const KioskInfo = z
  .object({
    locationId: z.string(),
    organizationId: z.string(),
    name: z.string().openapi({ description: "The location's name" }),
    organizationName: z.string(),
    logoUrl: z.string().nullable(),
    timezone: z.string().openapi({ description: "IANA zone of the location (times on the receipt; the phone field's country)" }),
    defaultLanguage: Language.openapi({
      description: "The location's defaultLanguage when set, else the organization's: the kiosk's language until the visitor picks one",
    }),
    languages: z.array(Language).openapi({ description: "The languages the pages offer, in the order of the language switch" }),
    queues: z
      .array(
        z.object({
          queueId: z.string(),
          queueName: z.string(),
          letter: z.string(),
          serviceId: z.string(),
          serviceName: z.string(),
        }),
      )
      .openapi({ description: "Queues of the location's active services that take tickets now, by service name" }),
  })
  .openapi("KioskInfo");

const kiosk = createRoute({
  method: "get",
  path: "/widget/locations/{locationId}/kiosk",
  tags: ["Widget"],
  summary: "What a ticket kiosk at this location offers",
  description:
    "The location, its organization's name and logo, and the queues of its active services that take tickets now (one kiosk button each). " +
    "A `widget` key, or any key or member with read access to the organization.",
  security: SECURITY.any,
  request: { params: idParam("locationId", "loc") },
  responses: { 200: jsonResponse(okEnvelope(KioskInfo), "The kiosk's choices"), ...errors() },
});

app.openapi(kiosk, async (c) => {
  const { locationId } = c.req.valid("param");
  const info = await kioskInfo(deps(c), locationId, (organizationId) =>
    widgetActor(c, organizationId, "read", { what: "Location", at: [locationId] }),
  );
  return c.json(ok(info), 200);
});

export default app;

// Baseline 0 of `npm run bench` (./bare.toml): a Worker that is only a fetch handler, with no
// router, assets, bindings or middleware. The bench's empty route is compared with it.
const BODY = JSON.stringify({ success: true, data: null });

export default {
  fetch(): Response {
    return new Response(BODY, { headers: { "Content-Type": "application/json" } });
  },
} satisfies ExportedHandler;

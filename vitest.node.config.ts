import { readFileSync } from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";

// Tests that need Node rather than workerd: the OpenAPI schema validator compiles JSON
// schemas with `new Function` and reads its schemas from disk, which workerd forbids.
// The Worker imports embed.js minified (src/widget/embed.min.js, not committed): built here too, as
// vitest.config.ts does, since this half may start first (scripts/build-embed.mjs writes it atomically).
await (await import("./scripts/build-embed.mjs")).buildEmbed();
// The catalogue's lists, from the language files present (scripts/build-languages.mjs).
(await import("./scripts/build-languages.mjs")).buildLanguages();

export default defineConfig({
  plugins: [
    {
      // The same as wrangler.toml's `Text` rule: the widget script is imported as a string.
      name: "widget-script-as-text",
      enforce: "pre",
      load(id) {
        if (id.endsWith("/widget/embed.js") || id.endsWith("/widget/embed.min.js") || id.endsWith("/widget/board.js"))
          return `export default ${JSON.stringify(readFileSync(id, "utf8"))};`;
        return undefined;
      },
    },
  ],
  resolve: {
    alias: { "cloudflare:workers": path.join(import.meta.dirname, "test/node/cloudflare-workers-shim.ts") },
  },
  test: {
    include: ["test/node/**/*.test.ts"],
    environment: "node",
  },
});

import { describe, expect, it } from "vitest";
import { render, TEMPLATES } from "../../src/domain/notification-templates";

describe("notification templates", () => {
  it("never put the word queue (or file) after or before the queue's own name: a queue named 'Main queue' reads once", () => {
    const values = { code: "A-042", queue: "Main queue", position: 3, wait: 12, ahead: 2, counter: "Guichet 1", otp: "123456" };
    for (const [key, texts] of Object.entries(TEMPLATES)) {
      for (const language of ["fr", "en"] as const) {
        const { body } = render(key as keyof typeof TEMPLATES, language, values);
        expect(body, `${key} ${language}`).not.toMatch(/Main queue queue|the Main queue|file Main queue/);
        expect(texts[language].body, `${key} ${language}`).not.toMatch(/\{queue\} queue|[Ff]ile \{queue\}\)/);
      }
    }
    expect(render("ticket.created", "en", values).body).toBe("You are in line for Main queue, position 3, estimated wait 12 min.");
    expect(render("ticket.created", "fr", values).body).toBe("Vous êtes en attente pour Main queue, position 3, attente estimée 12 min.");
  });
});
